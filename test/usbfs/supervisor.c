/*
 * usbfs supervisor (test tooling, never shipped): emulated USB printers for the real `usb`
 * package and the kernel's usblp interface, on a machine without a USB bus and without root.
 *
 *   supervisor --listen NAME --root DIR --control-fd FD   serve (started by test/usbfs/usb-stack.ts)
 *   supervisor --run NAME -- command args...              run a command under a serving supervisor
 *
 * Why seccomp user notification: `usb` 3.x is node-usb-rs on the Rust nusb crate, which makes its
 * open/ioctl/epoll calls as raw system calls, so no LD_PRELOAD library sees them. A process under
 * the filter (seccomp-attach.h) stops at each call the filter names; this program reads the call,
 * answers it or lets it continue, and reads and writes the caller's memory where the call passes
 * pointers (process_vm_readv/writev), as the kernel would.
 *
 * What it emulates, per device (the host, usb-stack.ts, says what is plugged and plays the
 * printer behind each endpoint through the control socket):
 *   - sysfs: paths under /sys/bus/usb (and the /dev/usb directory) are the host's files under
 *     DIR: an open gets a descriptor of the host's file, readlink/stat/access are done on it.
 *   - usbfs, /dev/bus/usb/BBB/DDD: reading the descriptors, claim/release, detaching and
 *     re-attaching the kernel driver, clear halt, set configuration, bulk URBs submitted, reaped
 *     and discarded. The descriptor given to the caller is an eventfd whose "writable" state
 *     stands for usbfs's POLLOUT (a URB can be reaped), so nusb's epoll thread wakes as it would.
 *   - usblp, /dev/usb/lpN: non-blocking writes of at most 8192 bytes with one transfer in flight
 *     (EAGAIN until it completes), reads of what the printer sent, ENODEV after an unplug.
 *   - the udev netlink socket (hotplug): socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT) gets one end
 *     of a datagram socket pair; recvfrom answers as a udev multicast message would.
 * Bytes never wait here for the host inside a call that the host's own process may be making: an
 * OUT transfer is handed to the host and completes when the host says so, and a reply is queued
 * when the host sends it. So a test process can be supervised and be the printers' host at once.
 */
#include "seccomp-attach.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/usbdevice_fs.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef USBDEVFS_GET_SPEED
#define USBDEVFS_GET_SPEED _IO('U', 31)
#endif
#ifndef USBDEVFS_CONNINFO_EX
#define USBDEVFS_CONNINFO_EX(len) _IOC(_IOC_READ, 'U', 32, len)
#endif

/* ---- control protocol (little-endian, the same struct on both sides) ---------------------- */

struct msg_header {
  uint32_t len; /* header and payload */
  uint16_t type;
  uint16_t dev;
  uint32_t a;
  int32_t b;
};

enum {
  /* host -> supervisor */
  H_DEVICE = 1,   /* a = busnum << 16 | devnum, payload = descriptors: plugged (again) */
  H_UNPLUG = 2,   /* the device is gone */
  H_OUT_DONE = 3, /* a = seq, b = status (0 or -errno), payload = u32 actual */
  H_IN = 4,       /* a = endpoint address, payload = one transfer's bytes (may be empty) */
  H_HALT = 5,     /* a = endpoint address: it stalls until CLEAR_HALT */
  H_HELD = 6,     /* a = interface, b = 1/0: another program has claimed it */
  H_DRIVER = 7,   /* a = interface, b = 1/0: a kernel driver is bound to it */
  H_LP = 8,       /* a = minor, b = ep_out | ep_in << 8 | interface << 16 (-1: no usblp) */
  H_UEVENT = 9,   /* payload = NUL-separated KEY=VALUE properties */
  H_FAULT = 10,   /* a = FAULT_*: a fault for the next call of its kind */
  /* supervisor -> host */
  S_OUT = 101,     /* a = seq, b = endpoint address, payload = bytes */
  S_DISCARD = 102, /* a = seq: the caller cancelled that OUT transfer */
  S_EVENT = 103,   /* a = EV_*, b = argument */
  S_LOG = 104,     /* payload = text */
  S_READY = 105,
  S_ATTACHED = 106, /* a = pid */
};

enum {
  EV_OPEN = 1,
  EV_CLOSE = 2,
  EV_CLAIM = 3,
  EV_RELEASE = 4,
  EV_DETACH = 5,
  EV_ATTACH = 6,
  EV_CLEAR_HALT = 7,
  EV_RESET = 8,
  EV_SET_CONFIGURATION = 9,
  EV_LP_OPEN = 10,
  EV_LP_CLOSE = 11,
  EV_UNKNOWN_IOCTL = 12,
  EV_CLAIM_REFUSED = 13,
  EV_SET_INTERFACE = 14,
  EV_OPEN_REFUSED = 15,
  EV_NO_ACCESS = 16, /* the supervisor could not read a caller's memory (b = pid) */
  EV_HOTPLUG_SOCKET = 17, /* a process opened the udev hotplug socket (b = pid) */
};

enum { FAULT_UNPLUG_ON_OPEN = 1 };

/* ---- state ---------------------------------------------------------------------------------- */

#define MAX_DEVICES 64
#define MAX_FAKES 96
#define MAX_LISTENERS 16
#define MAX_IN 64
#define LP_BUF 8192

enum { K_USBFS = 1, K_USBLP = 2, K_UEVENT = 3 };
enum { U_WAIT_HOST = 1, U_WAIT_DATA = 2, U_DONE = 3 };

struct chunk {
  struct chunk *next;
  size_t len, off;
  unsigned char data[];
};

struct urb {
  struct urb *next;
  int fake;         /* the descriptor it was submitted on */
  uint64_t uptr;    /* the caller's struct usbdevfs_urb */
  uint64_t buf;     /* its buffer */
  uint32_t seq;     /* OUT: the host's name for it */
  int ep, type, len, state, status, actual;
  unsigned char *data; /* IN: bytes to copy out when reaped */
  struct timespec discarded; /* OUT: when the caller cancelled it (the host then answers) */
};

struct device {
  int defined, present, gen;
  int busnum, devnum;
  unsigned char desc[8192];
  size_t desc_len;
  uint32_t driver_bound, held_elsewhere;
  int claim_owner[32]; /* fake index + 1 per interface, 0 = free */
  uint32_t halted;     /* bit (ep & 0x0f) + (ep & 0x80 ? 16 : 0) */
  struct chunk *inq[16], *inq_tail[16];
  int lp_minor, lp_out, lp_in, lp_iface, lp_open;
  int lp_visible; /* the node exists: usblp is bound to lp_iface of a present device */
  int fault;
};

struct held { /* a blocking usblp call answered later */
  int used;
  int listener;
  uint64_t id;
  int kind; /* 1 write, 2 read */
  uint64_t buf;
  size_t len;
  pid_t tid;
};

struct fake {
  int used, kind, dev, gen, fd, nonblock;
  pid_t tgid;
  int local;   /* eventfd (usbfs, usblp) or our copy of the target's socket end (uevent) */
  int peer;    /* uevent: the end we write to */
  ino_t ino;   /* of what was injected: to notice a descriptor closed behind our back */
  off_t offset;
  struct urb *done, *done_tail;
  uint32_t lp_seq; /* usblp: the write transfer in flight (0: none) */
  size_t lp_sent;
  struct held held;
};

static struct device devices[MAX_DEVICES];
static struct fake fakes[MAX_FAKES];
static struct urb *pending; /* submitted, not completed: every device */
static int listeners[MAX_LISTENERS];
static int nlisteners;
static int control = -1, listen_sock = -1;
static char root[4096];
static uint32_t next_seq = 1;
static struct seccomp_notif_sizes sizes;
static int verbose;
/* The listener of the notification being handled: responses go back through it. */
static int cur_listener = -1;

/* ---- helpers -------------------------------------------------------------------------------- */

static void send_msg(int type, int dev, uint32_t a, int32_t b, const void *payload, size_t n) {
  if (control < 0) return;
  struct msg_header h = {(uint32_t)(sizeof h + n), (uint16_t)type, (uint16_t)dev, a, b};
  struct iovec iov[2] = {{&h, sizeof h}, {(void *)payload, n}};
  size_t total = sizeof h + n, done = 0;
  while (done < total) {
    ssize_t w = writev(control, iov, n ? 2 : 1);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd p = {control, POLLOUT, 0};
        poll(&p, 1, 1000);
        continue;
      }
      control = -1; /* the host is gone */
      return;
    }
    done += (size_t)w;
    /* advance the iovecs */
    size_t k = (size_t)w;
    for (int i = 0; i < 2 && k > 0; i++) {
      size_t take = k < iov[i].iov_len ? k : iov[i].iov_len;
      iov[i].iov_base = (char *)iov[i].iov_base + take;
      iov[i].iov_len -= take;
      k -= take;
    }
  }
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof text) n = sizeof text - 1;
  if (verbose) fprintf(stderr, "[usbfs] %s\n", text);
  send_msg(S_LOG, 0, 0, 0, text, (size_t)n);
}

static void event(int dev, int what, int32_t arg) { send_msg(S_EVENT, dev, (uint32_t)what, arg, NULL, 0); }

/* The caller's memory, in pieces that never cross a page (a read that faults stops there). */
static ssize_t rmem(pid_t pid, uint64_t addr, void *to, size_t n) {
  struct iovec l = {to, n}, r = {(void *)(uintptr_t)addr, n};
  return process_vm_readv(pid, &l, 1, &r, 1, 0);
}

static ssize_t wmem(pid_t pid, uint64_t addr, const void *from, size_t n) {
  struct iovec l = {(void *)from, n}, r = {(void *)(uintptr_t)addr, n};
  return process_vm_writev(pid, &l, 1, &r, 1, 0);
}

/* A NUL-terminated string from the caller; -1 when it cannot be read. */
static int rstring(pid_t pid, uint64_t addr, char *out, size_t max) {
  size_t got = 0;
  while (got < max - 1) {
    size_t page_left = 4096 - ((addr + got) & 4095);
    size_t want = max - 1 - got < page_left ? max - 1 - got : page_left;
    ssize_t r = rmem(pid, addr + got, out + got, want);
    if (r <= 0) return -1;
    void *nul = memchr(out + got, 0, (size_t)r);
    if (nul) return 0;
    got += (size_t)r;
  }
  out[max - 1] = 0;
  return 0;
}

static void respond_on(int listener, uint64_t id, int64_t val, int err) {
  struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
  resp->id = id;
  if (err) resp->error = -err;
  else resp->val = val;
  /* ENOENT: the caller was interrupted or is gone; nothing waits for this answer any more. */
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  free(resp);
}

static void respond(uint64_t id, int64_t val, int err) { respond_on(cur_listener, id, val, err); }

static void respond_continue(int listener, uint64_t id) {
  struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
  resp->id = id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  free(resp);
}

static pid_t tgid_of(pid_t tid) {
  static pid_t last_tid, last_tgid;
  if (tid == last_tid) return last_tgid;
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/status", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tid;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return tid;
  buf[n] = 0;
  char *t = strstr(buf, "\nTgid:");
  pid_t tgid = t ? (pid_t)atoi(t + 6) : tid;
  last_tid = tid;
  last_tgid = tgid;
  return tgid;
}

static ino_t target_ino(pid_t tgid, int fd) {
  char path[64];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d/fd/%d", tgid, fd);
  if (stat(path, &st) < 0) return 0;
  return st.st_ino;
}

static int fake_at(pid_t tgid, int fd) {
  for (int i = 0; i < MAX_FAKES; i++)
    if (fakes[i].used && fakes[i].tgid == tgid && fakes[i].fd == fd) return i;
  return -1;
}

/* A free descriptor number in the caller's range. */
static int free_number(pid_t tgid) {
  for (int fd = USBFS_FD_LO; fd < USBFS_FD_HI; fd++) {
    if (fake_at(tgid, fd) >= 0) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", tgid, fd);
    if (access(path, F_OK) < 0 && errno == ENOENT) return fd;
  }
  return -1;
}

/* Puts `local` into the caller at a chosen number and makes that the call's return value. */
static int inject(int listener, uint64_t id, int local, int number, int cloexec) {
  struct seccomp_notif_addfd add;
  memset(&add, 0, sizeof add);
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SEND | (number >= 0 ? SECCOMP_ADDFD_FLAG_SETFD : 0);
  add.srcfd = (uint32_t)local;
  add.newfd = number >= 0 ? (uint32_t)number : 0;
  add.newfd_flags = cloexec ? O_CLOEXEC : 0;
  return ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
}

static void set_writable(int efd, int writable) {
  uint64_t v;
  if (read(efd, &v, 8) < 0) { /* already 0 */
  }
  if (!writable) {
    v = 0xfffffffffffffffeULL;
    if (write(efd, &v, 8) < 0) logf_("eventfd write: %s", strerror(errno));
  }
}

static int stale(const struct fake *f) {
  const struct device *d = &devices[f->dev];
  return !d->present || d->gen != f->gen;
}

/* usbfs POLLOUT: a completed URB to reap, or a device that is gone (reap says ENODEV). */
static void readiness(int i) {
  struct fake *f = &fakes[i];
  if (f->kind != K_USBFS) return;
  set_writable(f->local, f->done != NULL || stale(f));
}

static void complete(struct urb *u, int status, int actual) {
  u->state = U_DONE;
  u->status = status;
  u->actual = actual;
  /* unlink from pending */
  for (struct urb **p = &pending; *p; p = &(*p)->next)
    if (*p == u) {
      *p = u->next;
      break;
    }
  u->next = NULL;
  struct fake *f = &fakes[u->fake];
  if (!f->used) {
    free(u->data);
    free(u);
    return;
  }
  if (f->done_tail) f->done_tail->next = u;
  else f->done = u;
  f->done_tail = u;
  readiness(u->fake);
}

static int halted(const struct device *d, int ep) {
  return (d->halted >> ((ep & 0x0f) + (ep & 0x80 ? 16 : 0))) & 1;
}

/* Hands queued IN bytes to waiting IN transfers and usblp readers of device `dev`. */
static void feed_in(int dev);

/*
 * usblp's node exists while the driver is bound to the printer interface of a present device:
 * the placeholder in the host's /dev/usb follows here, before the call that changed it returns
 * (the kernel creates and removes the node inside the bind and unbind). Descriptors opened
 * before the unbind answer ENODEV from then on.
 */
static void lp_sync(int dev) {
  struct device *d = &devices[dev];
  int visible = d->present && d->lp_minor >= 0 && d->lp_out && (d->driver_bound >> d->lp_iface & 1);
  if (d->lp_minor >= 0) {
    char path[4200];
    snprintf(path, sizeof path, "%s/dev/usb/lp%d", root, d->lp_minor);
    if (visible) {
      int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0660);
      if (fd >= 0) close(fd);
    } else {
      unlink(path);
    }
  }
  if (d->lp_visible && !visible) {
    for (int i = 0; i < MAX_FAKES; i++) {
      struct fake *f = &fakes[i];
      if (f->used && f->kind == K_USBLP && f->dev == dev) {
        f->gen = -1; /* the node went with its driver: ENODEV from now on */
        f->lp_seq = 0;
        if (f->held.used) {
          f->held.used = 0;
          respond_on(f->held.listener, f->held.id, 0, ENODEV);
        }
      }
    }
    d->lp_open = 0;
  }
  d->lp_visible = visible;
}

/* ---- the host's messages -------------------------------------------------------------------- */

static void finish_lp_write(struct fake *f, int status) {
  f->lp_seq = 0;
  if (f->held.used && f->held.kind == 1) {
    f->held.used = 0;
    if (status < 0) respond_on(f->held.listener, f->held.id, 0, EIO);
    else respond_on(f->held.listener, f->held.id, (int64_t)f->lp_sent, 0);
  }
}

static void unplug(int dev) {
  struct device *d = &devices[dev];
  d->present = 0;
  /* Every transfer in flight ends as the kernel kills it: ESHUTDOWN, reaped as Disconnected. */
  for (struct urb *u = pending, *next; u; u = next) {
    next = u->next;
    if (fakes[u->fake].dev == dev) complete(u, -ESHUTDOWN, 0);
  }
  for (int q = 0; q < 16; q++) {
    while (d->inq[q]) {
      struct chunk *c = d->inq[q];
      d->inq[q] = c->next;
      free(c);
    }
    d->inq_tail[q] = NULL;
  }
  for (int i = 0; i < MAX_FAKES; i++) {
    struct fake *f = &fakes[i];
    if (!f->used || f->dev != dev) continue;
    if (f->kind == K_USBLP) {
      f->lp_seq = 0;
      if (f->held.used) {
        f->held.used = 0;
        respond_on(f->held.listener, f->held.id, 0, ENODEV);
      }
    }
    readiness(i);
  }
  memset(d->claim_owner, 0, sizeof d->claim_owner);
  d->halted = 0;
  lp_sync(dev);
}

static void on_host(const struct msg_header *h, const unsigned char *p, size_t n) {
  int dev = h->dev;
  if (dev >= MAX_DEVICES) return;
  struct device *d = &devices[dev];
  switch (h->type) {
  case H_DEVICE:
    if (d->present) unplug(dev);
    d->defined = 1;
    d->present = 1;
    d->gen++;
    d->busnum = (int)(h->a >> 16);
    d->devnum = (int)(h->a & 0xffff);
    d->desc_len = n < sizeof d->desc ? n : sizeof d->desc;
    memcpy(d->desc, p, d->desc_len);
    d->halted = 0;
    d->fault = 0;
    d->lp_open = 0; /* a new device: the old one's usblp node is gone with it */
    d->lp_visible = 0;
    memset(d->claim_owner, 0, sizeof d->claim_owner);
    lp_sync(dev);
    break;
  case H_UNPLUG:
    unplug(dev);
    break;
  case H_OUT_DONE: {
    uint32_t actual = 0;
    if (n >= 4) memcpy(&actual, p, 4);
    for (struct urb *u = pending; u; u = u->next)
      if (u->seq == h->a && u->state == U_WAIT_HOST) {
        complete(u, h->b, (int)actual);
        return;
      }
    for (int i = 0; i < MAX_FAKES; i++)
      if (fakes[i].used && fakes[i].kind == K_USBLP && fakes[i].lp_seq == h->a) {
        finish_lp_write(&fakes[i], h->b);
        return;
      }
    break; /* cancelled or its descriptor closed meanwhile */
  }
  case H_IN: {
    if (!d->present) break;
    int q = h->a & 0x0f;
    struct chunk *c = malloc(sizeof *c + n);
    c->next = NULL;
    c->len = n;
    c->off = 0;
    memcpy(c->data, p, n);
    if (d->inq_tail[q]) d->inq_tail[q]->next = c;
    else d->inq[q] = c;
    d->inq_tail[q] = c;
    feed_in(dev);
    break;
  }
  case H_HALT: {
    int ep = (int)h->a;
    d->halted |= 1u << ((ep & 0x0f) + (ep & 0x80 ? 16 : 0));
    for (struct urb *u = pending, *next; u; u = next) {
      next = u->next;
      if (fakes[u->fake].dev == dev && u->ep == ep) {
        if (u->state == U_WAIT_HOST) send_msg(S_DISCARD, dev, u->seq, 0, NULL, 0);
        complete(u, -EPIPE, 0);
      }
    }
    break;
  }
  case H_HELD:
    if (h->a < 32) {
      if (h->b) d->held_elsewhere |= 1u << h->a;
      else d->held_elsewhere &= ~(1u << h->a);
    }
    break;
  case H_DRIVER:
    if (h->a < 32) {
      if (h->b) d->driver_bound |= 1u << h->a;
      else d->driver_bound &= ~(1u << h->a);
    }
    lp_sync(dev);
    break;
  case H_LP:
    if (h->b < 0) {
      d->lp_minor = -1;
      d->lp_out = d->lp_in = 0;
    } else {
      d->lp_minor = (int)h->a;
      d->lp_out = h->b & 0xff;
      d->lp_in = (h->b >> 8) & 0xff;
      d->lp_iface = (h->b >> 16) & 0xff;
    }
    lp_sync(dev);
    break;
  case H_UEVENT: {
    /* libudev's monitor header (40 bytes), then the properties: what nusb reads (hotplug.rs). */
    unsigned char packet[4096];
    if (n + 40 > sizeof packet) break;
    memset(packet, 0, 40);
    memcpy(packet, "libudev\0\xfe\xed\xca\xfe", 12);
    uint32_t hs = 40, off = 40, len = (uint32_t)n;
    memcpy(packet + 12, &hs, 4);
    memcpy(packet + 16, &off, 4);
    memcpy(packet + 20, &len, 4);
    memcpy(packet + 40, p, n);
    for (int i = 0; i < MAX_FAKES; i++)
      if (fakes[i].used && fakes[i].kind == K_UEVENT)
        if (send(fakes[i].peer, packet, 40 + n, MSG_DONTWAIT) < 0)
          logf_("uevent to pid %d: %s", fakes[i].tgid, strerror(errno));
    break;
  }
  case H_FAULT:
    d->fault = (int)h->a;
    break;
  }
}

/* ---- IN data -------------------------------------------------------------------------------- */

static void feed_in(int dev) {
  struct device *d = &devices[dev];
  for (;;) {
    /* the oldest IN transfer waiting on this device whose endpoint has bytes */
    struct urb *u = NULL;
    for (struct urb *v = pending; v; v = v->next)
      if (v->state == U_WAIT_DATA && fakes[v->fake].dev == dev && d->inq[v->ep & 0x0f]) {
        u = v;
        break;
      }
    if (!u) break;
    int q = u->ep & 0x0f;
    struct chunk *c = d->inq[q];
    size_t avail = c->len - c->off;
    size_t take = avail < (size_t)u->len ? avail : (size_t)u->len;
    u->data = malloc(take ? take : 1);
    memcpy(u->data, c->data + c->off, take);
    c->off += take;
    if (c->off >= c->len) {
      d->inq[q] = c->next;
      if (!d->inq[q]) d->inq_tail[q] = NULL;
      free(c);
    }
    complete(u, 0, (int)take);
  }
  /* a usblp reader blocked in read() */
  for (int i = 0; i < MAX_FAKES; i++) {
    struct fake *f = &fakes[i];
    if (!f->used || f->kind != K_USBLP || f->dev != dev || !f->held.used || f->held.kind != 2) continue;
    int q = d->lp_in & 0x0f;
    struct chunk *c = d->inq[q];
    if (!c) continue;
    size_t avail = c->len - c->off;
    size_t take = avail < f->held.len ? avail : f->held.len;
    wmem(f->held.tid, f->held.buf, c->data + c->off, take);
    c->off += take;
    if (c->off >= c->len) {
      d->inq[q] = c->next;
      if (!d->inq[q]) d->inq_tail[q] = NULL;
      free(c);
    }
    f->held.used = 0;
    respond_on(f->held.listener, f->held.id, (int64_t)take, 0);
  }
}

/* ---- closing -------------------------------------------------------------------------------- */

static void forget(int i, int closed_by_caller) {
  struct fake *f = &fakes[i];
  if (!f->used) return;
  if (f->kind == K_USBFS) {
    struct device *d = &devices[f->dev];
    /* The kernel releases what the descriptor claimed and kills its transfers. */
    if (d->gen == f->gen)
      for (int k = 0; k < 32; k++)
        if (d->claim_owner[k] == i + 1) {
          d->claim_owner[k] = 0;
          event(f->dev, EV_RELEASE, k);
        }
    for (struct urb *u = pending, *next; u; u = next) {
      next = u->next;
      if (u->fake == i) {
        if (u->state == U_WAIT_HOST) send_msg(S_DISCARD, f->dev, u->seq, 0, NULL, 0);
        for (struct urb **p = &pending; *p; p = &(*p)->next)
          if (*p == u) {
            *p = u->next;
            break;
          }
        free(u->data);
        free(u);
      }
    }
    event(f->dev, EV_CLOSE, closed_by_caller ? f->tgid : -f->tgid);
  } else if (f->kind == K_USBLP) {
    if (f->gen == devices[f->dev].gen) devices[f->dev].lp_open = 0;
    if (f->lp_seq) send_msg(S_DISCARD, f->dev, f->lp_seq, 0, NULL, 0);
    event(f->dev, EV_LP_CLOSE, f->tgid);
  }
  for (struct urb *u = f->done, *next; u; u = next) {
    next = u->next;
    free(u->data);
    free(u);
  }
  if (f->local >= 0) close(f->local);
  if (f->peer >= 0) close(f->peer);
  memset(f, 0, sizeof *f);
}

/*
 * Descriptors that vanished without a close() we saw (exit, exec, close_range); and cancelled
 * transfers the host has not answered within 2 s, which end as the kernel would end them (a
 * caller waits for every transfer it cancelled).
 */
static void collect(void) {
  for (int i = 0; i < MAX_FAKES; i++)
    if (fakes[i].used && target_ino(fakes[i].tgid, fakes[i].fd) != fakes[i].ino) forget(i, 0);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  for (struct urb *u = pending, *next; u; u = next) {
    next = u->next;
    if (u->state == U_WAIT_HOST && u->discarded.tv_sec && now.tv_sec - u->discarded.tv_sec >= 2) {
      logf_("the host did not answer the cancel of transfer %u in 2 s: ended with nothing taken", u->seq);
      complete(u, -ENOENT, 0);
    }
  }
}

/* ---- path calls ----------------------------------------------------------------------------- */

static int starts(const char *path, const char *prefix) {
  size_t n = strlen(prefix);
  return strncmp(path, prefix, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* Paths the host owns: sysfs's USB bus and the USB device nodes' directories. */
static int emulated(const char *path) {
  return starts(path, "/sys/bus/usb") || starts(path, "/dev/bus/usb") || starts(path, "/dev/usb");
}

/* The host's copy of an emulated path (the device nodes are placeholders there), or NULL. */
static const char *mapped(const char *path, char *out, size_t max) {
  if (!emulated(path)) return NULL;
  snprintf(out, max, "%s%s", root, path);
  return out;
}

static int new_fake(int kind, int dev, pid_t tgid) {
  for (int i = 0; i < MAX_FAKES; i++)
    if (!fakes[i].used) {
      memset(&fakes[i], 0, sizeof fakes[i]);
      fakes[i].used = 1;
      fakes[i].kind = kind;
      fakes[i].dev = dev;
      fakes[i].gen = devices[dev].gen;
      fakes[i].tgid = tgid;
      fakes[i].local = fakes[i].peer = -1;
      return i;
    }
  return -1;
}

/* Injects the new fake's descriptor; answers the call with its number or an error. */
static void open_fake(int listener, uint64_t id, int i, int flags) {
  struct fake *f = &fakes[i];
  int number = free_number(f->tgid);
  if (number < 0) {
    forget(i, 1);
    respond(id, 0, EMFILE);
    return;
  }
  f->fd = number;
  if (inject(listener, id, f->local, number, flags & O_CLOEXEC) < 0) {
    int e = errno;
    forget(i, 1);
    if (e != ENOENT) respond(id, 0, e); /* ENOENT: the caller is gone */
    return;
  }
  f->ino = target_ino(f->tgid, number);
}

static void on_open(int listener, struct seccomp_notif *req, const char *path, int flags) {
  pid_t tgid = tgid_of((pid_t)req->pid);
  char buf[8320];
  unsigned bus, dnum, minor;
  char extra;
  if (sscanf(path, "/dev/bus/usb/%3u/%3u%c", &bus, &dnum, &extra) == 2) {
    for (int k = 0; k < MAX_DEVICES; k++) {
      struct device *d = &devices[k];
      if (!d->present || d->busnum != (int)bus || d->devnum != (int)dnum) continue;
      if (d->fault == FAULT_UNPLUG_ON_OPEN) {
        /* unplugged between the listing and the open */
        d->fault = 0;
        event(k, EV_OPEN_REFUSED, ENOENT);
        unplug(k);
        respond(req->id, 0, ENOENT);
        return;
      }
      int i = new_fake(K_USBFS, k, tgid);
      if (i < 0) {
        respond(req->id, 0, ENFILE);
        return;
      }
      fakes[i].local = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      readiness(i);
      event(k, EV_OPEN, tgid);
      open_fake(listener, req->id, i, flags);
      return;
    }
    respond(req->id, 0, ENOENT);
    return;
  }
  if (sscanf(path, "/dev/usb/lp%u%c", &minor, &extra) == 1) {
    for (int k = 0; k < MAX_DEVICES; k++) {
      struct device *d = &devices[k];
      if (!d->lp_visible || d->lp_minor != (int)minor) continue;
      if (d->lp_open) { /* usblp takes one opener at a time */
        respond(req->id, 0, EBUSY);
        return;
      }
      int i = new_fake(K_USBLP, k, tgid);
      if (i < 0) {
        respond(req->id, 0, ENFILE);
        return;
      }
      fakes[i].local = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      fakes[i].nonblock = (flags & O_NONBLOCK) != 0;
      d->lp_open = 1;
      event(k, EV_LP_OPEN, tgid);
      open_fake(listener, req->id, i, flags);
      return;
    }
    respond(req->id, 0, ENOENT);
    return;
  }
  const char *m = mapped(path, buf, sizeof buf);
  if (!m) {
    respond_continue(listener, req->id);
    return;
  }
  /* A directory of nodes, or sysfs: the host's file, opened here with the caller's flags. */
  struct stat st;
  if (stat(m, &st) == 0 && !S_ISDIR(st.st_mode) && !starts(path, "/sys/bus/usb")) {
    respond(req->id, 0, ENOENT); /* a placeholder of a node that is not emulated now */
    return;
  }
  path = m;
  int local = open(path, (flags & ~O_CREAT) | O_CLOEXEC);
  if (local < 0) {
    respond(req->id, 0, errno);
    return;
  }
  if (inject(listener, req->id, local, -1, flags & O_CLOEXEC) < 0 && errno != ENOENT)
    respond(req->id, 0, errno);
  close(local);
}

static void on_path_call(int listener, struct seccomp_notif *req) {
  pid_t pid = (pid_t)req->pid;
  const uint64_t *a = (const uint64_t *)req->data.args;
  int nr = req->data.nr;
  uint64_t path_arg;
  int dirfd = AT_FDCWD;
#ifdef SYS_open
  if (nr == SYS_open) path_arg = a[0];
  else
#endif
#ifdef SYS_readlink
      if (nr == SYS_readlink) path_arg = a[0];
  else
#endif
#ifdef SYS_stat
      if (nr == SYS_stat) path_arg = a[0];
  else
#endif
#ifdef SYS_lstat
      if (nr == SYS_lstat) path_arg = a[0];
  else
#endif
#ifdef SYS_access
      if (nr == SYS_access) path_arg = a[0];
  else
#endif
  {
    dirfd = (int)a[0];
    path_arg = a[1];
  }
  char path[4096];
  if (path_arg == 0 || rstring(pid, path_arg, path, sizeof path) < 0) {
    /* Unreadable (another user's process, Yama): not ours to answer. */
    static pid_t reported;
    if (path_arg != 0 && pid != reported) {
      reported = pid;
      event(0, EV_NO_ACCESS, pid);
    }
    respond_continue(listener, req->id);
    return;
  }
  if (path[0] != '/' || (dirfd != AT_FDCWD && path[0] != '/')) {
    respond_continue(listener, req->id);
    return;
  }
  int is_open = nr == SYS_openat;
#ifdef SYS_open
  is_open = is_open || nr == SYS_open;
#endif
  if (is_open) {
    int flags = (int)(nr == SYS_openat ? a[2] : a[1]);
    if (!emulated(path)) {
      respond_continue(listener, req->id);
      return;
    }
    on_open(listener, req, path, flags);
    return;
  }
  char buf[8320];
  const char *m = mapped(path, buf, sizeof buf);
  if (!m) {
    respond_continue(listener, req->id);
    return;
  }
  int readlink_call = nr == SYS_readlinkat;
#ifdef SYS_readlink
  readlink_call = readlink_call || nr == SYS_readlink;
#endif
  if (readlink_call) {
    uint64_t out = nr == SYS_readlinkat ? a[2] : a[1];
    size_t size = (size_t)(nr == SYS_readlinkat ? a[3] : a[2]);
    char target[4096];
    ssize_t n = readlink(m, target, sizeof target);
    if (n < 0) {
      respond(req->id, 0, errno);
      return;
    }
    if ((size_t)n > size) n = (ssize_t)size;
    wmem(pid, out, target, (size_t)n);
    respond(req->id, n, 0);
    return;
  }
  if (nr == SYS_statx) {
    struct statx sx;
    if (statx(AT_FDCWD, m, (int)a[2], (unsigned)a[3], &sx) < 0) {
      respond(req->id, 0, errno);
      return;
    }
    wmem(pid, a[4], &sx, sizeof sx);
    respond(req->id, 0, 0);
    return;
  }
  int stat_call = nr == SYS_newfstatat;
  int nofollow = nr == SYS_newfstatat && (a[3] & AT_SYMLINK_NOFOLLOW);
  uint64_t stat_out = nr == SYS_newfstatat ? a[2] : a[1];
#ifdef SYS_stat
  stat_call = stat_call || nr == SYS_stat;
#endif
#ifdef SYS_lstat
  if (nr == SYS_lstat) {
    stat_call = 1;
    nofollow = 1;
  }
#endif
  if (stat_call) {
    struct stat st;
    if ((nofollow ? lstat(m, &st) : stat(m, &st)) < 0) {
      respond(req->id, 0, errno);
      return;
    }
    wmem(pid, stat_out, &st, sizeof st);
    respond(req->id, 0, 0);
    return;
  }
  /* access family */
  int mode = (int)(nr == SYS_faccessat ? a[2] : a[1]);
#ifdef SYS_faccessat2
  if (nr == SYS_faccessat2) mode = (int)a[2];
#endif
  if (access(m, mode) < 0) respond(req->id, 0, errno);
  else respond(req->id, 0, 0);
}

/* ---- usbfs ioctls --------------------------------------------------------------------------- */

static int claim(int i, unsigned iface) {
  struct fake *f = &fakes[i];
  struct device *d = &devices[f->dev];
  if (iface >= 32) return EINVAL;
  if (d->claim_owner[iface] == i + 1) return 0;
  if (d->claim_owner[iface] || (d->held_elsewhere >> iface & 1) || (d->driver_bound >> iface & 1)) {
    event(f->dev, EV_CLAIM_REFUSED, (int32_t)iface);
    return EBUSY;
  }
  d->claim_owner[iface] = i + 1;
  event(f->dev, EV_CLAIM, (int32_t)iface);
  return 0;
}

/* The interface an endpoint belongs to, from the active configuration's descriptors. */
static int interface_of(const struct device *d, int ep) {
  size_t off = d->desc_len > 18 ? 18 : d->desc_len;
  int iface = -1;
  while (off + 2 <= d->desc_len) {
    unsigned len = d->desc[off], type = d->desc[off + 1];
    if (len < 2) break;
    if (type == 4 && off + 3 <= d->desc_len) iface = d->desc[off + 2];
    if (type == 5 && off + 3 <= d->desc_len && d->desc[off + 2] == ep) return iface;
    off += len;
  }
  return -1;
}

static void on_usbfs_ioctl(int i, struct seccomp_notif *req) {
  struct fake *f = &fakes[i];
  struct device *d = &devices[f->dev];
  pid_t pid = (pid_t)req->pid;
  unsigned long cmd = (unsigned int)req->data.args[1];
  uint64_t arg = req->data.args[2];
  int gone = stale(f);
  if (cmd == USBDEVFS_REAPURBNDELAY || cmd == USBDEVFS_REAPURB) {
    struct urb *u = f->done;
    if (!u) {
      respond(req->id, 0, gone ? ENODEV : EAGAIN);
      return;
    }
    f->done = u->next;
    if (!f->done) f->done_tail = NULL;
    if (u->data && u->actual > 0) wmem(pid, u->buf, u->data, (size_t)u->actual);
    int32_t st = u->status, actual = u->actual;
    wmem(pid, u->uptr + offsetof(struct usbdevfs_urb, status), &st, 4);
    wmem(pid, u->uptr + offsetof(struct usbdevfs_urb, actual_length), &actual, 4);
    wmem(pid, arg, &u->uptr, sizeof u->uptr);
    free(u->data);
    free(u);
    readiness(i);
    respond(req->id, 0, 0);
    return;
  }
  if (cmd == USBDEVFS_DISCARDURB) {
    for (struct urb *u = pending; u; u = u->next)
      if (u->fake == i && u->uptr == arg) {
        if (u->state == U_WAIT_HOST) {
          /* The host says how much of it the printer had taken (H_OUT_DONE, -ENOENT). */
          if (!u->discarded.tv_sec) {
            clock_gettime(CLOCK_MONOTONIC, &u->discarded);
            send_msg(S_DISCARD, f->dev, u->seq, 0, NULL, 0);
          }
        } else {
          complete(u, -ENOENT, 0);
        }
        respond(req->id, 0, 0);
        return;
      }
    respond(req->id, 0, EINVAL);
    return;
  }
  if (gone) {
    respond(req->id, 0, ENODEV);
    return;
  }
  switch (cmd) {
  case USBDEVFS_CLAIMINTERFACE: {
    unsigned iface = 0;
    rmem(pid, arg, &iface, sizeof iface);
    int e = claim(i, iface);
    respond(req->id, 0, e);
    return;
  }
  case USBDEVFS_RELEASEINTERFACE: {
    unsigned iface = 0;
    rmem(pid, arg, &iface, sizeof iface);
    if (iface >= 32 || d->claim_owner[iface] != i + 1) {
      respond(req->id, 0, EINVAL);
      return;
    }
    d->claim_owner[iface] = 0;
    event(f->dev, EV_RELEASE, (int32_t)iface);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_IOCTL: {
    struct usbdevfs_ioctl io;
    if (rmem(pid, arg, &io, sizeof io) != (ssize_t)sizeof io || io.ifno < 0 || io.ifno >= 32) {
      respond(req->id, 0, EINVAL);
      return;
    }
    if ((unsigned)io.ioctl_code == USBDEVFS_DISCONNECT) {
      if (!(d->driver_bound >> io.ifno & 1)) {
        respond(req->id, 0, ENODATA);
        return;
      }
      d->driver_bound &= ~(1u << io.ifno);
      lp_sync(f->dev);
      event(f->dev, EV_DETACH, io.ifno);
      respond(req->id, 0, 0);
      return;
    }
    if ((unsigned)io.ioctl_code == USBDEVFS_CONNECT) {
      if (d->claim_owner[io.ifno]) { /* claimed through usbfs: no driver can bind */
        respond(req->id, 0, EBUSY);
        return;
      }
      if (!(d->driver_bound >> io.ifno & 1)) {
        d->driver_bound |= 1u << io.ifno;
        lp_sync(f->dev);
        event(f->dev, EV_ATTACH, io.ifno);
      }
      respond(req->id, 0, 0);
      return;
    }
    respond(req->id, 0, ENOTTY);
    return;
  }
  case USBDEVFS_DISCONNECT_CLAIM: {
    struct usbdevfs_disconnect_claim dc;
    if (rmem(pid, arg, &dc, sizeof dc) != (ssize_t)sizeof dc || dc.interface >= 32) {
      respond(req->id, 0, EINVAL);
      return;
    }
    if (d->driver_bound >> dc.interface & 1) {
      d->driver_bound &= ~(1u << dc.interface);
      lp_sync(f->dev);
      event(f->dev, EV_DETACH, (int32_t)dc.interface);
    }
    respond(req->id, 0, claim(i, dc.interface));
    return;
  }
  case USBDEVFS_GETDRIVER: {
    struct usbdevfs_getdriver gd;
    if (rmem(pid, arg, &gd, sizeof gd) != (ssize_t)sizeof gd || gd.interface >= 32) {
      respond(req->id, 0, EINVAL);
      return;
    }
    if (!(d->driver_bound >> gd.interface & 1)) {
      respond(req->id, 0, ENODATA);
      return;
    }
    memset(gd.driver, 0, sizeof gd.driver);
    strcpy(gd.driver, "usblp");
    wmem(pid, arg, &gd, sizeof gd);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_CLEAR_HALT: {
    unsigned ep = 0;
    rmem(pid, arg, &ep, sizeof ep);
    d->halted &= ~(1u << ((ep & 0x0f) + (ep & 0x80 ? 16 : 0)));
    event(f->dev, EV_CLEAR_HALT, (int32_t)ep);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_SETCONFIGURATION: {
    unsigned value = 0;
    rmem(pid, arg, &value, sizeof value);
    for (int k = 0; k < 32; k++)
      if (d->claim_owner[k]) {
        respond(req->id, 0, EBUSY);
        return;
      }
    event(f->dev, EV_SET_CONFIGURATION, (int32_t)value);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_SETINTERFACE:
    event(f->dev, EV_SET_INTERFACE, 0);
    respond(req->id, 0, 0);
    return;
  case USBDEVFS_RESET:
    event(f->dev, EV_RESET, 0);
    respond(req->id, 0, 0);
    return;
  case USBDEVFS_GET_CAPABILITIES: {
    uint32_t caps = USBDEVFS_CAP_BULK_CONTINUATION | USBDEVFS_CAP_NO_PACKET_SIZE_LIM;
    wmem(pid, arg, &caps, sizeof caps);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_GET_SPEED:
    respond(req->id, 2 /* USB_SPEED_FULL: a receipt printer */, 0);
    return;
  case USBDEVFS_CONNECTINFO: {
    struct usbdevfs_connectinfo ci = {(unsigned)d->devnum, 0};
    wmem(pid, arg, &ci, sizeof ci);
    respond(req->id, 0, 0);
    return;
  }
  case USBDEVFS_CONTROL:
    respond(req->id, 0, EPIPE); /* no control requests are modelled: a stall */
    return;
  case USBDEVFS_SUBMITURB: {
    struct usbdevfs_urb urb;
    if (rmem(pid, arg, &urb, sizeof urb) != (ssize_t)sizeof urb) {
      respond(req->id, 0, EFAULT);
      return;
    }
    if (urb.type == USBDEVFS_URB_TYPE_CONTROL) {
      respond(req->id, 0, EPIPE);
      return;
    }
    if (urb.type != USBDEVFS_URB_TYPE_BULK && urb.type != USBDEVFS_URB_TYPE_INTERRUPT) {
      respond(req->id, 0, EINVAL);
      return;
    }
    int iface = interface_of(d, urb.endpoint);
    if (iface < 0) {
      respond(req->id, 0, ENOENT); /* no such endpoint in the active configuration */
      return;
    }
    if (d->claim_owner[iface] != i + 1) {
      /* usbfs claims the interface for a transfer on it, or refuses when another has it */
      int e = claim(i, (unsigned)iface);
      if (e) {
        respond(req->id, 0, e);
        return;
      }
    }
    struct urb *u = calloc(1, sizeof *u);
    u->fake = i;
    u->uptr = arg;
    u->buf = (uint64_t)(uintptr_t)urb.buffer;
    u->ep = urb.endpoint;
    u->type = urb.type;
    u->len = urb.buffer_length;
    u->next = pending;
    pending = u;
    if (halted(d, urb.endpoint)) {
      complete(u, -EPIPE, 0);
    } else if (!(urb.endpoint & 0x80)) {
      u->seq = next_seq++;
      u->state = U_WAIT_HOST;
      unsigned char *bytes = malloc(u->len ? (size_t)u->len : 1);
      ssize_t got = u->len ? rmem(pid, u->buf, bytes, (size_t)u->len) : 0;
      if (got != u->len) {
        free(bytes);
        for (struct urb **p = &pending; *p; p = &(*p)->next)
          if (*p == u) {
            *p = u->next;
            break;
          }
        free(u);
        respond(req->id, 0, EFAULT);
        return;
      }
      send_msg(S_OUT, f->dev, u->seq, urb.endpoint, bytes, (size_t)u->len);
      free(bytes);
    } else {
      u->state = U_WAIT_DATA;
      /* pending is newest-first; feed_in takes the oldest: move it to the tail */
      pending = u->next;
      u->next = NULL;
      struct urb **p = &pending;
      while (*p) p = &(*p)->next;
      *p = u;
      feed_in(f->dev);
    }
    respond(req->id, 0, 0);
    return;
  }
  default:
    event(f->dev, EV_UNKNOWN_IOCTL, (int32_t)cmd);
    respond(req->id, 0, ENOTTY);
  }
}

/* ---- fd calls ------------------------------------------------------------------------------- */

static void lp_write(int i, struct seccomp_notif *req, uint64_t buf, size_t len) {
  struct fake *f = &fakes[i];
  struct device *d = &devices[f->dev];
  if (stale(f) || f->gen < 0) {
    respond(req->id, 0, ENODEV);
    return;
  }
  if (f->lp_seq) { /* the previous transfer is still going */
    if (f->nonblock) {
      respond(req->id, 0, EAGAIN);
      return;
    }
    respond(req->id, 0, EAGAIN); /* blocking writes are not modelled: the agent never makes them */
    return;
  }
  size_t n = len < LP_BUF ? len : LP_BUF;
  unsigned char bytes[LP_BUF];
  if (n && rmem((pid_t)req->pid, buf, bytes, n) != (ssize_t)n) {
    respond(req->id, 0, EFAULT);
    return;
  }
  if (n == 0) {
    respond(req->id, 0, 0);
    return;
  }
  f->lp_seq = next_seq++;
  f->lp_sent = n;
  send_msg(S_OUT, f->dev, f->lp_seq, d->lp_out, bytes, n);
  respond(req->id, (int64_t)n, 0);
}

static void lp_read(int i, struct seccomp_notif *req, uint64_t buf, size_t len) {
  struct fake *f = &fakes[i];
  struct device *d = &devices[f->dev];
  if (stale(f) || f->gen < 0) {
    respond(req->id, 0, ENODEV);
    return;
  }
  if (!d->lp_in) {
    respond(req->id, 0, EINVAL); /* a unidirectional printer (7/1/1) */
    return;
  }
  int q = d->lp_in & 0x0f;
  struct chunk *c = d->inq[q];
  if (!c) {
    if (f->nonblock) {
      respond(req->id, 0, EAGAIN);
      return;
    }
    f->held = (struct held){1, cur_listener, req->id, 2, buf, len, (pid_t)req->pid};
    return;
  }
  size_t avail = c->len - c->off;
  size_t take = avail < len ? avail : len;
  if (take) wmem((pid_t)req->pid, buf, c->data + c->off, take);
  c->off += take;
  if (c->off >= c->len) {
    d->inq[q] = c->next;
    if (!d->inq[q]) d->inq_tail[q] = NULL;
    free(c);
  }
  respond(req->id, (int64_t)take, 0);
}

static void on_fd_call(int listener, struct seccomp_notif *req) {
  pid_t tgid = tgid_of((pid_t)req->pid);
  int fd = (int)req->data.args[0];
  int nr = req->data.nr;
  int i = fake_at(tgid, fd);
  if (i >= 0 && target_ino(tgid, fd) != fakes[i].ino) {
    forget(i, 0); /* a new file at that number: the old one was closed behind our back */
    i = -1;
  }
  if (i < 0) {
    respond_continue(listener, req->id);
    return;
  }
  struct fake *f = &fakes[i];
  const uint64_t *a = (const uint64_t *)req->data.args;
  if (nr == SYS_close) {
    forget(i, 1);
    respond_continue(listener, req->id);
    return;
  }
  if (f->kind == K_UEVENT) {
    if (nr == SYS_bind) {
      respond(req->id, 0, 0);
      return;
    }
    if (nr == SYS_recvfrom) {
      unsigned char packet[8192];
      size_t len = a[2] < sizeof packet ? (size_t)a[2] : sizeof packet;
      ssize_t n = recv(f->local, packet, len, MSG_DONTWAIT);
      if (n < 0) {
        respond(req->id, 0, errno);
        return;
      }
      wmem((pid_t)req->pid, a[1], packet, (size_t)n);
      if (a[4]) {
        struct sockaddr_nl nl = {AF_NETLINK, 0, 0, 2 /* the udev multicast group */};
        socklen_t alen = 0;
        rmem((pid_t)req->pid, a[5], &alen, sizeof alen);
        if (alen > sizeof nl) alen = sizeof nl;
        wmem((pid_t)req->pid, a[4], &nl, alen);
        alen = sizeof nl;
        wmem((pid_t)req->pid, a[5], &alen, sizeof alen);
      }
      respond(req->id, n, 0);
      return;
    }
    respond_continue(listener, req->id);
    return;
  }
  if (f->kind == K_USBFS) {
    if (nr == SYS_ioctl) {
      on_usbfs_ioctl(i, req);
      return;
    }
    if (nr == SYS_lseek) {
      int64_t off = (int64_t)a[1];
      int whence = (int)a[2];
      off_t next = whence == SEEK_SET ? off : whence == SEEK_CUR ? f->offset + off : (off_t)devices[f->dev].desc_len + off;
      if (next < 0) {
        respond(req->id, 0, EINVAL);
        return;
      }
      f->offset = next;
      respond(req->id, next, 0);
      return;
    }
    if (nr == SYS_read) {
      const struct device *d = &devices[f->dev];
      size_t n = (size_t)a[2];
      if ((size_t)f->offset >= d->desc_len) {
        respond(req->id, 0, 0);
        return;
      }
      if (n > d->desc_len - (size_t)f->offset) n = d->desc_len - (size_t)f->offset;
      wmem((pid_t)req->pid, a[1], d->desc + f->offset, n);
      f->offset += (off_t)n;
      respond(req->id, (int64_t)n, 0);
      return;
    }
    respond(req->id, 0, EINVAL);
    return;
  }
  /* usblp */
  if (nr == SYS_write) {
    lp_write(i, req, a[1], (size_t)a[2]);
    return;
  }
  if (nr == SYS_read) {
    lp_read(i, req, a[1], (size_t)a[2]);
    return;
  }
  if (nr == SYS_writev || nr == SYS_readv) {
    struct iovec iov;
    if (a[2] < 1 || rmem((pid_t)req->pid, a[1], &iov, sizeof iov) != (ssize_t)sizeof iov) {
      respond(req->id, 0, EINVAL);
      return;
    }
    /* the first buffer only: a short count, which callers accept from a device */
    if (nr == SYS_writev) lp_write(i, req, (uint64_t)(uintptr_t)iov.iov_base, iov.iov_len);
    else lp_read(i, req, (uint64_t)(uintptr_t)iov.iov_base, iov.iov_len);
    return;
  }
  if (nr == SYS_pread64 || nr == SYS_pwrite64 || nr == SYS_lseek) {
    respond(req->id, 0, ESPIPE);
    return;
  }
  if (nr == SYS_ioctl) {
    unsigned long cmd = (unsigned int)a[1];
    if (cmd == 0x060b /* LPGETSTATUS */) {
      /* 1284 status: selected, no error; paper-out is not modelled over this path */
      int status = 0x18;
      wmem((pid_t)req->pid, a[2], &status, sizeof status);
      respond(req->id, 0, stale(f) ? ENODEV : 0);
      return;
    }
    respond(req->id, 0, ENOTTY);
    return;
  }
  respond(req->id, 0, EINVAL);
}

/* ---- netlink -------------------------------------------------------------------------------- */

static void on_socket(int listener, struct seccomp_notif *req) {
  const uint64_t *a = (const uint64_t *)req->data.args;
  int type = (int)a[1];
  if ((int)a[2] != 15 /* NETLINK_KOBJECT_UEVENT */) {
    respond_continue(listener, req->id);
    return;
  }
  pid_t tgid = tgid_of((pid_t)req->pid);
  int i = new_fake(K_UEVENT, 0, tgid);
  if (i < 0) {
    respond(req->id, 0, ENFILE);
    return;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
    forget(i, 1);
    respond(req->id, 0, errno);
    return;
  }
  if (type & SOCK_NONBLOCK) fcntl(sv[1], F_SETFL, O_NONBLOCK);
  fakes[i].peer = sv[0];
  fakes[i].local = sv[1];
  open_fake(listener, req->id, i, (type & SOCK_CLOEXEC) ? O_CLOEXEC : 0);
  if (fakes[i].used) event(0, EV_HOTPLUG_SOCKET, tgid);
}

/* ---- the loop ------------------------------------------------------------------------------- */

static void on_notification(int listener) {
  struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
    free(req);
    return;
  }
  cur_listener = listener;
  int nr = req->data.nr;
  if (nr == SYS_socket) on_socket(listener, req);
  else if (nr == SYS_ioctl || nr == SYS_read || nr == SYS_write || nr == SYS_readv ||
           nr == SYS_writev || nr == SYS_pread64 || nr == SYS_pwrite64 || nr == SYS_lseek ||
           nr == SYS_close || nr == SYS_bind || nr == SYS_recvfrom)
    on_fd_call(listener, req);
  else on_path_call(listener, req);
  free(req);
}

static unsigned char inbuf[1 << 20];
static size_t inlen;

static int read_control(void) {
  ssize_t r = read(control, inbuf + inlen, sizeof inbuf - inlen);
  if (r <= 0) {
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    return -1;
  }
  inlen += (size_t)r;
  size_t off = 0;
  while (inlen - off >= sizeof(struct msg_header)) {
    struct msg_header h;
    memcpy(&h, inbuf + off, sizeof h);
    if (h.len < sizeof h || h.len > sizeof inbuf) return -1;
    if (inlen - off < h.len) break;
    on_host(&h, inbuf + off + sizeof h, h.len - sizeof h);
    off += h.len;
  }
  memmove(inbuf, inbuf + off, inlen - off);
  inlen -= off;
  return 0;
}

static void accept_attach(void) {
  int c = accept4(listen_sock, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0) return;
  pid_t pid = 0;
  struct iovec iov = {&pid, sizeof pid};
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = sizeof cbuf;
  struct pollfd p = {c, POLLIN, 0};
  if (poll(&p, 1, 5000) == 1 && recvmsg(c, &m, MSG_CMSG_CLOEXEC) > 0) {
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    if (cm && cm->cmsg_type == SCM_RIGHTS && nlisteners < MAX_LISTENERS) {
      int lfd;
      memcpy(&lfd, CMSG_DATA(cm), sizeof lfd);
      /* Linux 6.6+: the caller hands its CPU to us while we answer (a round trip of about 70 us
         becomes a few); older kernels refuse the flag and keep the ordinary wake-up. */
      ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
      listeners[nlisteners++] = lfd;
      send_msg(S_ATTACHED, 0, (uint32_t)pid, 0, NULL, 0);
      char ack = 'k';
      if (send(c, &ack, 1, MSG_NOSIGNAL) < 0) logf_("ack: %s", strerror(errno));
    }
  }
  close(c);
}

static int serve(const char *name) {
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
    fprintf(stderr, "usbfs supervisor: SECCOMP_GET_NOTIF_SIZES: %s\n", strerror(errno));
    return 2;
  }
  if (sizes.seccomp_notif < sizeof(struct seccomp_notif)) sizes.seccomp_notif = sizeof(struct seccomp_notif);
  if (sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
    sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
  listen_sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n + 1 > sizeof addr.sun_path) n = sizeof addr.sun_path - 1;
  memcpy(addr.sun_path + 1, name, n);
  if (bind(listen_sock, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
      listen(listen_sock, 16) < 0) {
    fprintf(stderr, "usbfs supervisor: listen on %s: %s\n", name, strerror(errno));
    return 2;
  }
  for (int k = 0; k < MAX_DEVICES; k++) devices[k].lp_minor = -1;
  send_msg(S_READY, 0, (uint32_t)getpid(), 0, NULL, 0);
  struct timespec last;
  clock_gettime(CLOCK_MONOTONIC, &last);
  for (;;) {
    struct pollfd p[2 + MAX_LISTENERS];
    int np = 0;
    if (control >= 0) p[np++] = (struct pollfd){control, POLLIN, 0};
    p[np++] = (struct pollfd){listen_sock, POLLIN, 0};
    int base = np;
    for (int k = 0; k < nlisteners; k++) p[np++] = (struct pollfd){listeners[k], POLLIN, 0};
    if (control < 0 && nlisteners == 0) {
      if (verbose) fprintf(stderr, "[usbfs] the host is gone and nobody is supervised: exiting\n");
      return 0; /* the host is gone and nobody is supervised */
    }
    int r = poll(p, (nfds_t)np, 250);
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "usbfs supervisor: poll: %s\n", strerror(errno));
      return 2;
    }
    if (control >= 0 && p[0].revents) {
      if (read_control() < 0) {
        if (verbose) fprintf(stderr, "[usbfs] the control socket closed\n");
        close(control);
        control = -1;
      }
    }
    /* Only the listeners that were polled: accept_attach may add one after them. */
    int polled = np - base;
    if (p[base - 1].revents & POLLIN) accept_attach();
    for (int k = polled - 1; k >= 0; k--) {
      short ev = p[base + k].revents;
      if (ev & POLLIN) on_notification(listeners[k]);
      else if (ev & (POLLHUP | POLLERR | POLLNVAL)) {
        if (verbose) fprintf(stderr, "[usbfs] listener %d hung up (%#x)\n", listeners[k], ev);
        close(listeners[k]);
        listeners[k] = listeners[--nlisteners];
      }
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >= 250) {
      collect();
      last = now;
    }
  }
}

int main(int argc, char **argv) {
  verbose = getenv("USBFS_VERBOSE") != NULL;
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 4 && strcmp(argv[1], "--run") == 0 && strcmp(argv[3], "--") == 0) {
    char err[256];
    if (argc < 5) {
      fprintf(stderr, "usbfs supervisor --run NAME -- command...\n");
      return 2;
    }
    if (usbfs_attach(argv[2], err, sizeof err) < 0) {
      fprintf(stderr, "usbfs supervisor --run: %s\n", err);
      return 125;
    }
    execvp(argv[4], argv + 4);
    fprintf(stderr, "usbfs supervisor --run: %s: %s\n", argv[4], strerror(errno));
    return 127;
  }
  const char *name = NULL;
  for (int k = 1; k + 1 < argc; k += 2) {
    if (strcmp(argv[k], "--listen") == 0) name = argv[k + 1];
    else if (strcmp(argv[k], "--root") == 0) snprintf(root, sizeof root, "%s", argv[k + 1]);
    else if (strcmp(argv[k], "--control-fd") == 0) control = atoi(argv[k + 1]);
  }
  if (!name || !root[0] || control < 0) {
    fprintf(stderr, "usage: supervisor --listen NAME --root DIR --control-fd FD\n"
                    "       supervisor --run NAME -- command args...\n");
    return 2;
  }
  fcntl(control, F_SETFD, FD_CLOEXEC);
  return serve(name);
}
