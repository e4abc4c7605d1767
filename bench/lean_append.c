/* bench/ledger.py's leanest chained append (_lean), written in C: what a compiled critical
   section could make of the same work on this machine. Each of PROCS processes appends EACH
   lines to PATH (which holds a line already): flock, stat of the path, pread of the tail for
   the previous hash, SHA-256, one write, unlock. Prints the seconds from the first fork to the
   last exit. Built by bench/ledger.py with the system's C compiler and libcrypto (OpenSSL).
   Usage: lean_append PATH PROCS EACH */
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int append(const char *path, int each) {
    int fd = open(path, O_RDWR | O_APPEND);
    if (fd < 0) return 1;
    char body[512], line[640], prev[17], hex[13];
    unsigned char md[SHA256_DIGEST_LENGTH];
    for (int i = 0; i < each; i++) {
        int n = snprintf(body, sizeof body,
                         "| 2026-12-07T10:00:00Z | 0123456789abcdef | bench | bench | t-%d | | | ok | 0.01 | "
                         "round 1; agent exit 0 in 1.2s; event number %d | ", i, i);
        struct stat st;
        if (flock(fd, LOCK_EX) != 0 || stat(path, &st) != 0) return 1;
        if (pread(fd, prev, 15, st.st_size - 15) != 15) return 1; /* "<hash> |\n" */
        prev[12] = 0;
        int m = snprintf(line, sizeof line, "%.*s%s |", n, body, prev);
        SHA256((const unsigned char *)line, (size_t)m, md);
        for (int k = 0; k < 6; k++) snprintf(hex + 2 * k, 3, "%02x", md[k]);
        m += snprintf(line + m, sizeof line - (size_t)m, " %s |\n", hex);
        if (write(fd, line, (size_t)m) != m || flock(fd, LOCK_UN) != 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int procs = atoi(argv[2]), each = atoi(argv[3]), failed = 0, status;
    double t = now();
    for (int p = 0; p < procs; p++)
        if (fork() == 0) _exit(append(argv[1], each));
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    printf("%.6f\n", now() - t);
    return failed;
}
