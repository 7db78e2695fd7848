/*
 * The supervised side of the usbfs emulator (test tooling): installs the seccomp filter that
 * sends this process's device-related system calls to the supervisor, and hands the supervisor
 * the filter's listener. Shared by the supervisor's `--run` mode (before exec) and by the
 * in-process N-API module (attach.c), which a test process loads to put itself under it.
 *
 * Which calls go to the supervisor:
 *   - path calls: open, openat, readlink, readlinkat, stat family, access family. The filter cannot
 *     read a path (it is a pointer), so every one of them reaches the supervisor, which answers the
 *     few under /sys/bus/usb, /dev/bus/usb and /dev/usb and lets the rest continue.
 *   - socket(AF_NETLINK, ...): the udev hotplug socket is faked.
 *   - fd calls (ioctl, read, write, readv, writev, pread64, pwrite64, lseek, close, bind,
 *     recvfrom) on descriptors in [USBFS_FD_LO, USBFS_FD_HI): the emulated device nodes and
 *     sockets are put at those numbers, so every other descriptor runs at full speed.
 */
#ifndef USBFS_SECCOMP_ATTACH_H
#define USBFS_SECCOMP_ATTACH_H

#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define USBFS_FD_LO 900
#define USBFS_FD_HI 1000

#if defined(__x86_64__)
#define USBFS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define USBFS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the usbfs emulator knows the system calls of x86_64 and aarch64 only"
#endif

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

#define USBFS_NOTIFY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)
#define USBFS_ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* The filter, built at run time: the jump offsets depend on which calls the architecture has. */
static int usbfs_filter(struct sock_filter *out, int max) {
  static const int path_calls[] = {
#ifdef SYS_open
      SYS_open,
#endif
#ifdef SYS_readlink
      SYS_readlink,
#endif
#ifdef SYS_stat
      SYS_stat,
#endif
#ifdef SYS_lstat
      SYS_lstat,
#endif
#ifdef SYS_access
      SYS_access,
#endif
      SYS_openat,       SYS_readlinkat, SYS_newfstatat, SYS_statx, SYS_faccessat,
#ifdef SYS_faccessat2
      SYS_faccessat2,
#endif
  };
  static const int fd_calls[] = {SYS_ioctl,   SYS_read,    SYS_write,  SYS_readv,
                                 SYS_writev,  SYS_pread64, SYS_pwrite64, SYS_lseek,
                                 SYS_close,   SYS_bind,    SYS_recvfrom};
  const int npath = sizeof path_calls / sizeof path_calls[0];
  const int nfd = sizeof fd_calls / sizeof fd_calls[0];
  int n = 0;
  if (max < 16 + npath + nfd) return -1;
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, USBFS_AUDIT_ARCH, 1, 0);
  out[n++] = (struct sock_filter)USBFS_ALLOW;
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  /* Path calls: each jumps over the rest of the list and the JA, onto the NOTIFY. */
  for (int i = 0; i < npath; i++)
    out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, path_calls[i], npath - i, 0);
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  out[n++] = (struct sock_filter)USBFS_NOTIFY;
  /* socket(AF_NETLINK, ...); any other call skips these four. */
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4);
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1);
  out[n++] = (struct sock_filter)USBFS_NOTIFY;
  out[n++] = (struct sock_filter)USBFS_ALLOW;
  /* fd calls: each jumps over the rest of the list and the ALLOW, onto the test of the fd. */
  for (int i = 0; i < nfd; i++)
    out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fd_calls[i], nfd - i, 0);
  out[n++] = (struct sock_filter)USBFS_ALLOW;
  /* the test: the fd (the low 32 bits of the first argument) in [LO, HI) */
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, USBFS_FD_LO, 0, 2);
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, USBFS_FD_HI, 1, 0);
  out[n++] = (struct sock_filter)USBFS_NOTIFY;
  out[n++] = (struct sock_filter)USBFS_ALLOW;
  return n;
}

/*
 * Connects to the supervisor listening on the abstract socket `name`, installs the filter on
 * every thread of this process (TSYNC) and sends the listener with this process's pid. Returns 0,
 * or -1 with a message in `err`. After it returns, the calls above are the supervisor's to answer.
 */
static int usbfs_attach(const char *name, char *err, size_t errlen) {
  struct sock_filter filter[64];
  int len = usbfs_filter(filter, 64);
  if (len < 0) {
    snprintf(err, errlen, "filter too long");
    return -1;
  }
  struct sock_fprog prog = {(unsigned short)len, filter};
  int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    snprintf(err, errlen, "socket: %s", strerror(errno));
    return -1;
  }
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n + 1 > sizeof addr.sun_path) n = sizeof addr.sun_path - 1;
  memcpy(addr.sun_path + 1, name, n); /* abstract: leading NUL */
  if (connect(sock, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0) {
    snprintf(err, errlen, "connect to the supervisor %s: %s", name, strerror(errno));
    close(sock);
    return -1;
  }
  struct ucred peer;
  socklen_t plen = sizeof peer;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &plen) == 0) {
    /* Under Yama ptrace_scope 1 the supervisor may read our memory only if we say so. */
    prctl(PR_SET_PTRACER, (unsigned long)peer.pid, 0, 0, 0);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    close(sock);
    return -1;
  }
  long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                          SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
                              SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
                          &prog);
  if (listener < 0) {
    snprintf(err, errlen, "seccomp(NEW_LISTENER|TSYNC): %s", strerror(errno));
    close(sock);
    return -1;
  }
  int lfd = (int)listener;
  pid_t pid = getpid();
  struct iovec iov = {&pid, sizeof pid};
  char cbuf[CMSG_SPACE(sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &lfd, sizeof lfd);
  if (sendmsg(sock, &msg, 0) < 0) {
    /* The filter is in place and nobody answers it: every open would now fail with ENOSYS. */
    snprintf(err, errlen, "sending the listener: %s", strerror(errno));
    close(lfd);
    close(sock);
    return -1;
  }
  close(lfd);
  /* Wait until the supervisor polls the listener. */
  char ack = 0;
  if (recv(sock, &ack, 1, 0) != 1 || ack != 'k') {
    snprintf(err, errlen, "the supervisor did not acknowledge");
    close(sock);
    return -1;
  }
  close(sock);
  return 0;
}

#endif
