/* rtnetlink: the one link operation a new network namespace needs. One request and its
 * ack on a plain NETLINK_ROUTE socket; no library (msp links statically, see
 * runtime/meson.build, and libmnl has no static archive on Debian). */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/netlink.h"

int
rt_netlink_loopback_up(msp_err *err)
{
        struct {
                struct nlmsghdr nh;
                struct ifinfomsg ifm;
        } req;
        /* The ack: an NLMSG_ERROR carrying the request's header (no payload: NETLINK_CAP_ACK
         * is not needed for a request this small). */
        union {
                struct nlmsghdr nh;
                char buf[512];
        } ack;
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        _cleanup_close_ int fd = -1;
        unsigned ifindex;
        ssize_t n;

        /* In a fresh namespace lo is always ifindex 1; if_nametoindex is only the check. */
        ifindex = if_nametoindex("lo");
        if (ifindex == 0)
                ifindex = 1;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0)
                return msp_err_sys(err, errno, "netlink socket");

        memset(&req, 0, sizeof req);
        req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.ifm);
        req.nh.nlmsg_type = RTM_NEWLINK;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        req.nh.nlmsg_seq = 1;
        req.ifm.ifi_family = AF_UNSPEC;
        req.ifm.ifi_index = (int) ifindex;
        req.ifm.ifi_flags = IFF_UP;
        req.ifm.ifi_change = IFF_UP;

        if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
                return msp_err_sys(err, errno, "send RTM_NEWLINK for lo");
        for (;;) {
                n = recv(fd, &ack, sizeof ack, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return msp_err_sys(err, errno, "receive the netlink ack for lo");
                for (struct nlmsghdr *h = &ack.nh; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_seq != req.nh.nlmsg_seq || h->nlmsg_type != NLMSG_ERROR)
                                continue;
                        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                return msp_err_set(err, EBADMSG, "short netlink ack for lo");
                        const struct nlmsgerr *e = NLMSG_DATA(h);
                        if (e->error < 0)
                                return msp_err_sys(err, -e->error, "set lo up");
                        return 0;
                }
        }
}
