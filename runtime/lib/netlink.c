/* rtnetlink through libmnl: the one link operation a new network namespace needs. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <time.h>

#include "macros.h"
#include "netlink.h"

static void
mnl_socket_closep(struct mnl_socket **nl)
{
        if (*nl)
                (void) mnl_socket_close(*nl);
}
#define _cleanup_mnl_ _cleanup_(mnl_socket_closep)

int
rt_netlink_loopback_up(msp_err *err)
{
        _cleanup_mnl_ struct mnl_socket *nl = NULL;
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        struct ifinfomsg *ifm;
        unsigned seq = (unsigned) time(NULL), portid;
        unsigned ifindex;
        ssize_t n;
        int r;

        /* In a fresh namespace lo is always ifindex 1; if_nametoindex is only the check. */
        ifindex = if_nametoindex("lo");
        if (ifindex == 0)
                ifindex = 1;

        nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
        if (!nl)
                return msp_err_sys(err, errno, "netlink socket");
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
                return msp_err_sys(err, errno, "bind netlink socket");
        portid = mnl_socket_get_portid(nl);

        nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = RTM_NEWLINK;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        nlh->nlmsg_seq = seq;
        ifm = mnl_nlmsg_put_extra_header(nlh, sizeof *ifm);
        ifm->ifi_family = AF_UNSPEC;
        ifm->ifi_index = (int) ifindex;
        ifm->ifi_flags = IFF_UP;
        ifm->ifi_change = IFF_UP;

        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                return msp_err_sys(err, errno, "send RTM_NEWLINK for lo");
        /* The ack: mnl_cb_run turns an NLMSG_ERROR into -1 with errno set. */
        do {
                n = mnl_socket_recvfrom(nl, buf, sizeof buf);
                if (n < 0)
                        return msp_err_sys(err, errno, "receive the netlink ack for lo");
                r = mnl_cb_run(buf, (size_t) n, seq, portid, NULL, NULL);
        } while (r == MNL_CB_OK);
        if (r < 0)
                return msp_err_sys(err, errno, "set lo up");
        return 0;
}
