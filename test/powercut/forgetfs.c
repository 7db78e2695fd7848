/*
 * forgetfs: a FUSE file system that forgets like a power cut (test tooling, never shipped;
 * issue 39). It mirrors a backing directory and holds back what a real disk would lose:
 *
 *   - file data: writes stay in this process's memory (4 KiB pages over the backing file) until
 *     the file is fsync'd; then the pages go to the backing file, which is fsync'd too;
 *   - names: create, mkdir, unlink, rmdir, rename and link are done on the backing directory at
 *     once, with an undo record, durable only once their directory is fsync'd (a rename counts
 *     for its target directory); fsync of a new file also makes its own name and its new parent
 *     directories durable, as ext4 does (ext4_sync_parent);
 *   - `cut`: every unsynced page is dropped and every name change not yet durable is undone, in
 *     reverse order: what the backing directory then holds is what a card has after a power cut.
 *     `cut torn` also writes a prefix of the last unsynced page written (a torn page).
 *
 * Files whose name ends in `-shm` pass straight through (SQLite's WAL index: it is mapped into
 * memory, which FUSE only allows with the kernel's page cache, and it is never needed after a
 * crash: the first connection rebuilds it from the WAL, so losing or keeping it changes nothing).
 *
 * Control: the file `/.forgetfs` in the mount. Writing `cut`, `cut torn`, `arm OP SUFFIX N [torn]`
 * or `disarm` to it acts before the write returns; reading it gives counters. `arm` makes the N-th
 * OP (write, fsync, rename, create, unlink) on a path ending in SUFFIX a power cut at that exact
 * moment: the calling process is killed (SIGKILL) before the operation is done, then the cut.
 *
 *   forgetfs BACKING_DIR MOUNTPOINT [fuse options]      (built with `pkg-config fuse3`)
 *
 * Runs single-threaded (-s): the state needs no locks, and a test's load is small.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#define PAGE 4096
#define CONTROL "/.forgetfs"
#define TRASH ".forgetfs-trash"
/* fi->fh of the control file, which has no backing descriptor */
#define NO_FD UINT64_MAX

static char backing[PATH_MAX];

/* ---- counters ------------------------------------------------------------------------------ */

static struct {
  unsigned long writes, fsyncs, dirsyncs, cuts, torn, dropped_pages, undone;
} stats;

/* ---- inode data: unsynced pages ------------------------------------------------------------- */

struct page {
  struct page *next;
  off_t index;
  unsigned char data[PAGE];
};

#define BUCKETS 256

struct inode {
  struct inode *next;
  dev_t dev;
  ino_t ino;
  off_t size;         /* the size the processes see */
  int dirty;          /* pages or a size change not yet on the backing file */
  struct page *pages[BUCKETS];
  unsigned long npages;
};

static struct inode *inodes;
/* the last unsynced page written: what `cut torn` tears */
static dev_t last_dev;
static ino_t last_ino;
static off_t last_page = -1;

static struct inode *inode_of(dev_t dev, ino_t ino, int create, off_t backing_size) {
  for (struct inode *i = inodes; i; i = i->next)
    if (i->dev == dev && i->ino == ino) return i;
  if (!create) return NULL;
  struct inode *i = calloc(1, sizeof *i);
  i->dev = dev;
  i->ino = ino;
  i->size = backing_size;
  i->next = inodes;
  inodes = i;
  return i;
}

static struct page *page_of(struct inode *i, off_t index) {
  for (struct page *p = i->pages[index % BUCKETS]; p; p = p->next)
    if (p->index == index) return p;
  return NULL;
}

static void drop_pages(struct inode *i, off_t from_index, int lost) {
  for (int b = 0; b < BUCKETS; b++) {
    struct page **pp = &i->pages[b];
    while (*pp) {
      if ((*pp)->index >= from_index) {
        struct page *dead = *pp;
        *pp = dead->next;
        free(dead);
        i->npages--;
        if (lost) stats.dropped_pages++;
      } else {
        pp = &(*pp)->next;
      }
    }
  }
}

static void forget_inodes(void) {
  while (inodes) {
    struct inode *i = inodes;
    inodes = i->next;
    drop_pages(i, 0, 1);
    free(i);
  }
  last_page = -1;
}

/* ---- names: the undo log -------------------------------------------------------------------- */

enum { L_CREATE, L_MKDIR, L_UNLINK, L_RMDIR, L_RENAME };

struct entry {
  struct entry *prev, *next;
  int type;
  char *path, *path2; /* RENAME: from path to path2 */
  char *trash;        /* UNLINK/RMDIR: where the name's file waits; RENAME: the replaced target */
};

static struct entry *log_head, *log_tail;
static unsigned long trash_seq;

static void backing_path(char *out, const char *path) { snprintf(out, PATH_MAX, "%s%s", backing, path); }

static char *parent_of(const char *path) {
  char *copy = strdup(path);
  char *slash = strrchr(copy, '/');
  if (slash == copy) copy[1] = 0;
  else if (slash) *slash = 0;
  return copy;
}

static void log_add(int type, const char *path, const char *path2, const char *trash) {
  struct entry *e = calloc(1, sizeof *e);
  e->type = type;
  e->path = strdup(path);
  e->path2 = path2 ? strdup(path2) : NULL;
  e->trash = trash ? strdup(trash) : NULL;
  e->prev = log_tail;
  if (log_tail) log_tail->next = e;
  else log_head = e;
  log_tail = e;
}

static void remove_tree(const char *p) {
  struct stat st;
  if (lstat(p, &st) < 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(p);
    if (d) {
      struct dirent *de;
      while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char child[PATH_MAX];
        snprintf(child, sizeof child, "%s/%s", p, de->d_name);
        remove_tree(child);
      }
      closedir(d);
    }
    rmdir(p);
  } else {
    unlink(p);
  }
}

static void log_free(struct entry *e, int durable) {
  if (e->prev) e->prev->next = e->next;
  else log_head = e->next;
  if (e->next) e->next->prev = e->prev;
  else log_tail = e->prev;
  if (durable && e->trash) remove_tree(e->trash); /* the old file is gone for good */
  free(e->path);
  free(e->path2);
  free(e->trash);
  free(e);
}

/* A place in the trash for a name's file that an unsynced change took away. */
static char *to_trash(const char *real) {
  static char t[PATH_MAX];
  snprintf(t, sizeof t, "%s/%s/%lu", backing, TRASH, ++trash_seq);
  if (rename(real, t) < 0) return NULL;
  return t;
}

/* fsync of a directory: its name changes become durable. */
static void commit_dir(const char *dir) {
  for (struct entry *e = log_head, *next; e; e = next) {
    next = e->next;
    char *parent = parent_of(e->type == L_RENAME ? e->path2 : e->path);
    int match = strcmp(parent, dir) == 0;
    free(parent);
    if (match) log_free(e, 1);
  }
}

/* fsync of a file: its own creation and its new ancestors become durable (ext4_sync_parent). */
static void commit_parents(const char *path) {
  char *p = strdup(path);
  for (;;) {
    for (struct entry *e = log_head, *next; e; e = next) {
      next = e->next;
      if ((e->type == L_CREATE || e->type == L_MKDIR) && strcmp(e->path, p) == 0) log_free(e, 1);
    }
    if (strcmp(p, "/") == 0) break;
    char *up = parent_of(p);
    free(p);
    p = up;
  }
  free(p);
}

static void undo_names(void) {
  char a[PATH_MAX], b[PATH_MAX];
  while (log_tail) {
    struct entry *e = log_tail;
    backing_path(a, e->path);
    switch (e->type) {
    case L_CREATE:
      unlink(a);
      break;
    case L_MKDIR:
      remove_tree(a);
      break;
    case L_UNLINK:
    case L_RMDIR:
      if (e->trash) rename(e->trash, a);
      break;
    case L_RENAME:
      backing_path(b, e->path2);
      rename(b, a);
      if (e->trash) rename(e->trash, b);
      break;
    }
    stats.undone++;
    free(e->trash);
    e->trash = NULL;
    log_free(e, 0);
  }
  char t[PATH_MAX];
  snprintf(t, sizeof t, "%s/%s", backing, TRASH);
  remove_tree(t);
  mkdir(t, 0700);
}

/* ---- the cut -------------------------------------------------------------------------------- */

static int is_shm(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && strcmp(path + n - 4, "-shm") == 0;
}

/* The backing file of an inode we hold pages of: found by walking the tree (cuts are rare). */
static int find_backing(const char *dir, dev_t dev, ino_t ino, char *out) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *de;
  int found = -1;
  while (found < 0 && (de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(p, &st) < 0) continue;
    if (st.st_dev == dev && st.st_ino == ino) {
      snprintf(out, PATH_MAX, "%s", p);
      found = 0;
    } else if (S_ISDIR(st.st_mode)) {
      found = find_backing(p, dev, ino, out);
    }
  }
  closedir(d);
  return found;
}

static void cut(int torn) {
  stats.cuts++;
  if (torn && last_page >= 0) {
    struct inode *i = inode_of(last_dev, last_ino, 0, 0);
    struct page *p = i ? page_of(i, last_page) : NULL;
    char path[PATH_MAX];
    if (p && find_backing(backing, last_dev, last_ino, path) == 0) {
      /* a prefix of the page reached the card, at least one byte and never all of it */
      size_t keep = 1 + (size_t)(random() % (PAGE - 1));
      off_t end = p->index * PAGE + (off_t)keep;
      if (end > i->size) keep = i->size > p->index * PAGE ? (size_t)(i->size - p->index * PAGE) : 0;
      int fd = open(path, O_WRONLY | O_CLOEXEC);
      if (fd >= 0 && keep > 0) {
        if (pwrite(fd, p->data, keep, p->index * PAGE) == (ssize_t)keep) stats.torn++;
      }
      if (fd >= 0) close(fd);
    }
  }
  forget_inodes();
  undo_names();
}

/* ---- armed cuts ----------------------------------------------------------------------------- */

static struct {
  int on, torn, fired;
  char op[16];
  char suffix[256];
  unsigned long n, seen;
} armed;

static int ends_with(const char *path, const char *suffix) {
  size_t a = strlen(path), b = strlen(suffix);
  return a >= b && strcmp(path + a - b, suffix) == 0;
}

/* True when this operation is the armed one: the caller is killed and the power goes. */
static int trip(const char *op, const char *path) {
  if (!armed.on || strcmp(armed.op, op) != 0 || !ends_with(path, armed.suffix)) return 0;
  if (++armed.seen < armed.n) return 0;
  armed.on = 0;
  armed.fired = 1;
  pid_t pid = fuse_get_context()->pid;
  if (pid > 0) kill(pid, SIGKILL);
  cut(armed.torn);
  return 1;
}

/* ---- operations ----------------------------------------------------------------------------- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  (void)conn;
  cfg->use_ino = 1;
  cfg->hard_remove = 1;
  cfg->attr_timeout = 0;
  cfg->entry_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->kernel_cache = 0;
  return NULL;
}

static int control_stat(struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_mode = S_IFREG | 0600;
  st->st_nlink = 1;
  st->st_size = 4096;
  return 0;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  if (strcmp(path, CONTROL) == 0) return control_stat(st);
  int r;
  if (fi && fi->fh != NO_FD && fi->fh != 0) r = fstat((int)fi->fh, st);
  else {
    char p[PATH_MAX];
    backing_path(p, path);
    r = lstat(p, st);
  }
  if (r < 0) return -errno;
  if (S_ISREG(st->st_mode)) {
    struct inode *i = inode_of(st->st_dev, st->st_ino, 0, 0);
    if (i) {
      st->st_size = i->size;
      st->st_blocks = (i->size + 511) / 512;
    }
  }
  return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
  (void)off;
  (void)fi;
  (void)flags;
  char p[PATH_MAX];
  backing_path(p, path);
  DIR *d = opendir(p);
  if (!d) return -errno;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strcmp(path, "/") == 0 && strcmp(de->d_name, TRASH) == 0) continue;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = de->d_ino;
    st.st_mode = (mode_t)de->d_type << 12;
    if (fill(buf, de->d_name, &st, 0, 0)) break;
  }
  closedir(d);
  return 0;
}

static int fs_readlink(const char *path, char *buf, size_t size) {
  char p[PATH_MAX];
  backing_path(p, path);
  ssize_t n = readlink(p, buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = 0;
  return 0;
}

static int fs_mkdir(const char *path, mode_t mode) {
  char p[PATH_MAX];
  backing_path(p, path);
  if (mkdir(p, mode) < 0) return -errno;
  log_add(L_MKDIR, path, NULL, NULL);
  return 0;
}

static int fs_unlink(const char *path) {
  if (trip("unlink", path)) return -EIO;
  char p[PATH_MAX];
  backing_path(p, path);
  struct stat st;
  if (lstat(p, &st) < 0) return -errno;
  char *t = to_trash(p);
  if (!t) return -errno;
  log_add(L_UNLINK, path, NULL, t);
  return 0;
}

static int fs_rmdir(const char *path) {
  char p[PATH_MAX];
  backing_path(p, path);
  DIR *d = opendir(p);
  if (!d) return -errno;
  struct dirent *de;
  int empty = 1;
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) empty = 0;
  closedir(d);
  if (!empty) return -ENOTEMPTY;
  char *t = to_trash(p);
  if (!t) return -errno;
  log_add(L_RMDIR, path, NULL, t);
  return 0;
}

static int fs_symlink(const char *target, const char *path) {
  char p[PATH_MAX];
  backing_path(p, path);
  if (symlink(target, p) < 0) return -errno;
  log_add(L_CREATE, path, NULL, NULL);
  return 0;
}

static int fs_link(const char *from, const char *to) {
  char a[PATH_MAX], b[PATH_MAX];
  backing_path(a, from);
  backing_path(b, to);
  if (link(a, b) < 0) return -errno;
  log_add(L_CREATE, to, NULL, NULL);
  return 0;
}

static int fs_rename(const char *from, const char *to, unsigned int flags) {
  if (flags) return -EINVAL; /* RENAME_NOREPLACE / EXCHANGE: not used by what runs here */
  if (trip("rename", to)) return -EIO;
  char a[PATH_MAX], b[PATH_MAX];
  backing_path(a, from);
  backing_path(b, to);
  struct stat st;
  if (lstat(a, &st) < 0) return -errno;
  char *t = NULL;
  if (lstat(b, &st) == 0) {
    t = to_trash(b);
    if (!t) return -errno;
    t = strdup(t);
  }
  if (rename(a, b) < 0) {
    int e = errno;
    if (t) rename(t, b);
    free(t);
    return -e;
  }
  log_add(L_RENAME, from, to, t);
  free(t);
  return 0;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
  (void)fi;
  char p[PATH_MAX];
  backing_path(p, path);
  return chmod(p, mode) < 0 ? -errno : 0;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
  (void)fi;
  char p[PATH_MAX];
  backing_path(p, path);
  return lchown(p, uid, gid) < 0 ? -errno : 0;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
  (void)fi;
  char p[PATH_MAX];
  backing_path(p, path);
  return utimensat(AT_FDCWD, p, tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static struct inode *inode_fd(int fd, int create) {
  struct stat st;
  if (fstat(fd, &st) < 0) return NULL;
  return inode_of(st.st_dev, st.st_ino, create, st.st_size);
}

/* A size change (truncate, O_TRUNC) waits for fsync like data. */
static int set_size(int fd, const char *path, off_t size) {
  if (is_shm(path)) return ftruncate(fd, size) < 0 ? -errno : 0;
  struct inode *i = inode_fd(fd, 1);
  if (!i) return -errno;
  if (size < i->size) {
    drop_pages(i, (size + PAGE - 1) / PAGE, 0);
    struct page *p = page_of(i, size / PAGE);
    if (p && size % PAGE) memset(p->data + size % PAGE, 0, PAGE - size % PAGE);
  }
  i->size = size;
  i->dirty = 1;
  return 0;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
  if (fi && fi->fh != NO_FD && fi->fh != 0) return set_size((int)fi->fh, path, size);
  char p[PATH_MAX];
  backing_path(p, path);
  int fd = open(p, O_RDWR | O_CLOEXEC);
  if (fd < 0) return -errno;
  int r = set_size(fd, path, size);
  close(fd);
  return r;
}

static int open_backing(const char *path, struct fuse_file_info *fi, int flags, mode_t mode) {
  char p[PATH_MAX];
  backing_path(p, path);
  /* Read and write always: a page may need reading to be completed, and fsync writes it. */
  int fd = open(p, (flags & ~(O_TRUNC | O_APPEND | O_WRONLY | O_RDONLY | O_RDWR)) | O_RDWR | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  fi->direct_io = !is_shm(path); /* no kernel page cache: this process has every byte's say */
  fi->keep_cache = 0;
  if (flags & O_TRUNC) set_size(fd, path, 0);
  return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
  if (strcmp(path, CONTROL) == 0) {
    fi->direct_io = 1;
    fi->fh = NO_FD;
    return 0;
  }
  return open_backing(path, fi, fi->flags, 0);
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  if (trip("create", path)) return -EIO;
  char p[PATH_MAX];
  backing_path(p, path);
  struct stat st;
  int existed = lstat(p, &st) == 0;
  int r = open_backing(path, fi, fi->flags | O_CREAT, mode);
  if (r == 0 && !existed) log_add(L_CREATE, path, NULL, NULL);
  return r;
}

static int control_text(char *out, size_t max) {
  return snprintf(out, max,
                  "writes %lu\nfsyncs %lu\ndirsyncs %lu\ncuts %lu\ntorn %lu\ndropped_pages %lu\n"
                  "undone %lu\npending_names %d\narmed %d\nfired %d\n",
                  stats.writes, stats.fsyncs, stats.dirsyncs, stats.cuts, stats.torn,
                  stats.dropped_pages, stats.undone, log_head != NULL, armed.on, armed.fired);
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  if (strcmp(path, CONTROL) == 0) {
    char text[1024];
    int n = control_text(text, sizeof text);
    if (off >= n) return 0;
    size_t k = (size_t)(n - off) < size ? (size_t)(n - off) : size;
    memcpy(buf, text + off, k);
    return (int)k;
  }
  int fd = (int)fi->fh;
  if (is_shm(path)) {
    ssize_t n = pread(fd, buf, size, off);
    return n < 0 ? -errno : (int)n;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  struct inode *i = inode_of(st.st_dev, st.st_ino, 0, 0);
  off_t fsize = i ? i->size : st.st_size;
  if (off >= fsize) return 0;
  if ((off_t)size > fsize - off) size = (size_t)(fsize - off);
  size_t done = 0;
  while (done < size) {
    off_t pos = off + (off_t)done;
    off_t index = pos / PAGE;
    size_t in_page = (size_t)(pos % PAGE);
    size_t k = PAGE - in_page < size - done ? PAGE - in_page : size - done;
    struct page *p = i ? page_of(i, index) : NULL;
    if (p) {
      memcpy(buf + done, p->data + in_page, k);
    } else {
      ssize_t n = pread(fd, buf + done, k, pos);
      if (n < 0) return -errno;
      if ((size_t)n < k) memset(buf + done + n, 0, k - (size_t)n); /* past the card's end */
    }
    done += k;
  }
  return (int)done;
}

static int control_write(const char *buf, size_t size) {
  char cmd[512];
  size_t n = size < sizeof cmd - 1 ? size : sizeof cmd - 1;
  memcpy(cmd, buf, n);
  cmd[n] = 0;
  char *nl = strchr(cmd, '\n');
  if (nl) *nl = 0;
  if (strcmp(cmd, "cut") == 0) cut(0);
  else if (strcmp(cmd, "cut torn") == 0) cut(1);
  else if (strcmp(cmd, "disarm") == 0) {
    armed.on = 0;
    armed.fired = 0;
  } else if (strncmp(cmd, "arm ", 4) == 0) {
    char op[16], suffix[256], torn[16] = "";
    unsigned long count;
    if (sscanf(cmd + 4, "%15s %255s %lu %15s", op, suffix, &count, torn) < 3) return -EINVAL;
    memset(&armed, 0, sizeof armed);
    snprintf(armed.op, sizeof armed.op, "%s", op);
    snprintf(armed.suffix, sizeof armed.suffix, "%s", suffix);
    armed.n = count ? count : 1;
    armed.torn = strcmp(torn, "torn") == 0;
    armed.on = 1;
  } else if (strncmp(cmd, "seed ", 5) == 0) {
    srandom((unsigned)strtoul(cmd + 5, NULL, 10));
  } else {
    return -EINVAL;
  }
  return (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi) {
  if (strcmp(path, CONTROL) == 0) return control_write(buf, size);
  if (trip("write", path)) return -EIO;
  int fd = (int)fi->fh;
  stats.writes++;
  if (is_shm(path)) {
    ssize_t n = pwrite(fd, buf, size, off);
    return n < 0 ? -errno : (int)n;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  struct inode *i = inode_of(st.st_dev, st.st_ino, 1, st.st_size);
  if (fi->flags & O_APPEND) off = i->size;
  size_t done = 0;
  while (done < size) {
    off_t pos = off + (off_t)done;
    off_t index = pos / PAGE;
    size_t in_page = (size_t)(pos % PAGE);
    size_t k = PAGE - in_page < size - done ? PAGE - in_page : size - done;
    struct page *p = page_of(i, index);
    if (!p) {
      p = calloc(1, sizeof *p);
      p->index = index;
      /* the page as the processes see it now: the card's bytes, up to the current size */
      off_t start = index * PAGE;
      if (start < i->size) {
        size_t want = (size_t)(i->size - start < PAGE ? i->size - start : PAGE);
        ssize_t n = pread(fd, p->data, want, start);
        if (n < 0) n = 0;
      }
      p->next = i->pages[index % BUCKETS];
      i->pages[index % BUCKETS] = p;
      i->npages++;
    }
    memcpy(p->data + in_page, buf + done, k);
    done += k;
    last_dev = st.st_dev;
    last_ino = st.st_ino;
    last_page = index;
  }
  if (off + (off_t)size > i->size) i->size = off + (off_t)size;
  i->dirty = 1;
  return (int)size;
}

/* Everything held for this file goes to the card, and the card is told to keep it. */
static int flush_inode(int fd, const char *path) {
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  struct inode *i = inode_of(st.st_dev, st.st_ino, 0, 0);
  if (i && i->dirty) {
    for (int b = 0; b < BUCKETS; b++)
      for (struct page *p = i->pages[b]; p; p = p->next) {
        off_t start = p->index * PAGE;
        if (start >= i->size) continue;
        size_t len = (size_t)(i->size - start < PAGE ? i->size - start : PAGE);
        if (pwrite(fd, p->data, len, start) != (ssize_t)len) return -EIO;
      }
    if (ftruncate(fd, i->size) < 0) return -errno;
    drop_pages(i, 0, 0);
    i->dirty = 0;
    if (last_dev == st.st_dev && last_ino == st.st_ino) last_page = -1;
  }
  if (fsync(fd) < 0) return -errno;
  commit_parents(path);
  return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)datasync; /* fdatasync keeps the data too: what matters here */
  if (strcmp(path, CONTROL) == 0) return 0;
  if (trip("fsync", path)) return -EIO;
  stats.fsyncs++;
  return flush_inode((int)fi->fh, path);
}

static int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)datasync;
  (void)fi;
  if (trip("fsyncdir", path)) return -EIO;
  stats.dirsyncs++;
  commit_dir(path);
  return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  if (fi->fh != NO_FD) close((int)fi->fh);
  return 0;
}

static int fs_statfs(const char *path, struct statvfs *st) {
  (void)path;
  return statvfs(backing, st) < 0 ? -errno : 0;
}

static int fs_access(const char *path, int mask) {
  if (strcmp(path, CONTROL) == 0) return 0;
  char p[PATH_MAX];
  backing_path(p, path);
  return access(p, mask) < 0 ? -errno : 0;
}

static int fs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
  if (mode) return -EOPNOTSUPP;
  struct stat st;
  if (fstat((int)fi->fh, &st) < 0) return -errno;
  struct inode *i = inode_of(st.st_dev, st.st_ino, 0, 0);
  off_t size = i ? i->size : st.st_size;
  if (off + len > size) return set_size((int)fi->fh, path, off + len);
  return 0;
}

static const struct fuse_operations ops = {
    .init = fs_init,
    .getattr = fs_getattr,
    .readlink = fs_readlink,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .symlink = fs_symlink,
    .rename = fs_rename,
    .link = fs_link,
    .chmod = fs_chmod,
    .chown = fs_chown,
    .truncate = fs_truncate,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .statfs = fs_statfs,
    .release = fs_release,
    .fsync = fs_fsync,
    .readdir = fs_readdir,
    .fsyncdir = fs_fsyncdir,
    .access = fs_access,
    .create = fs_create,
    .utimens = fs_utimens,
    .fallocate = fs_fallocate,
};

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: forgetfs BACKING_DIR MOUNTPOINT [fuse options]\n");
    return 2;
  }
  if (!realpath(argv[1], backing)) {
    perror(argv[1]);
    return 2;
  }
  char t[PATH_MAX];
  snprintf(t, sizeof t, "%s/%s", backing, TRASH);
  remove_tree(t);
  mkdir(t, 0700);
  srandom((unsigned)getpid());
  /* fuse_main(argv without the backing dir): forgetfs MOUNTPOINT -f -s [options] */
  char *args[64];
  int n = 0;
  args[n++] = argv[0];
  args[n++] = argv[2];
  args[n++] = "-f";
  args[n++] = "-s";
  for (int i = 3; i < argc && n < 62; i++) args[n++] = argv[i];
  args[n] = NULL;
  return fuse_main(n, args, &ops, NULL);
}
