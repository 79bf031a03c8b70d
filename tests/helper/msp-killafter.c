/* msp-killafter: run a command and SIGKILL it after a delay (the fault-injection tests).
 *
 *   msp-killafter USEC CMD [ARG...]
 *
 * Forks, execs CMD with the caller's stdio, sleeps USEC microseconds (CLOCK_MONOTONIC,
 * from before the fork), sends SIGKILL to CMD's pid (only that process: what it started lives on
 * as it would after a crash) and reaps it. Prints one line to stdout: "killed" when the
 * signal ended it, "exited N" when it was done before the delay. Exit status 0 either
 * way, 1 when CMD could not be started. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
        struct timespec deadline;
        int status;
        pid_t pid;

        if (argc < 3) {
                fprintf(stderr, "usage: msp-killafter USEC CMD [ARG...]\n");
                return 1;
        }
        long usec = strtol(argv[1], NULL, 10);
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += usec / 1000000;
        deadline.tv_nsec += (usec % 1000000) * 1000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        pid = fork();
        if (pid < 0) {
                perror("fork");
                return 1;
        }
        if (pid == 0) {
                execvp(argv[2], argv + 2);
                perror(argv[2]);
                _exit(127);
        }
        /* Until reaped, the child's pid cannot be reused: signalling one that is already
         * done (a zombie) is harmless. */
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
                ;
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                printf("killed\n");
        else
                printf("exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
        return 0;
}
