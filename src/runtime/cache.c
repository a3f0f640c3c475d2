/* runtime/cache: the on-disk compile cache shared by NVRTC cubins and C shared objects.
 * One flat folder; an entry is "<16 hex digits of the key>.<ext>". Entries stored through
 * rt_cache_put end with a 24-byte trailer (magic, length, FNV-1a of the data) so a torn or
 * corrupt file reads as a miss; writes go to a temp file in the same folder, then rename(2).
 * Compiled C objects (crun.c) are sealed with the same trailer before their rename into the
 * cache (the loader ignores bytes past the ELF's own) and checked before each load. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

static const char TRAILER_MAGIC[8] = {'M', 'G', 'C', 'A', 'C', 'H', 'E', '1'};
typedef struct trailer {
    char magic[8];
    uint64_t n, hash;
} trailer;

uint64_t rt_hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int rt_mkdir_p(char *path) {
    for (char *s = path + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        int bad = mkdir(path, 0755) != 0 && errno != EEXIST;
        *s = '/';
        if (bad) return -1;
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK | X_OK) == 0 ? 0 : -1;
}

const char *rt_cache_dir(void) {
    static _Thread_local char dir[4096];
    const char *env = getenv("MUGEN_CACHE_DIR"), *base;
    int n;
    if (env && *env) {
        if (strcmp(env, "off") == 0) return NULL;
        n = snprintf(dir, sizeof dir, "%s", env);
    } else if ((base = getenv("XDG_CACHE_HOME")) && *base) {
        n = snprintf(dir, sizeof dir, "%s/mugen", base);
    } else if ((base = getenv("HOME")) && *base) {
        n = snprintf(dir, sizeof dir, "%s/.cache/mugen", base);
    } else {
        return NULL;
    }
    if (n <= 0 || (size_t)n >= sizeof dir) return NULL;
    while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
    return rt_mkdir_p(dir) == 0 ? dir : NULL;
}

int rt_cache_path(uint64_t key, const char *ext, char *buf, size_t n) {
    const char *dir = rt_cache_dir();
    if (!dir) return -1;
    int k = snprintf(buf, n, "%s/%016llx.%s", dir, (unsigned long long)key, ext);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

/* Reads the whole file at fd into a base_alloc'd buffer. Returns NULL on any error. */
static void *read_all(int fd, size_t *n) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return NULL;
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = base_alloc(size);
    while (buf && got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (buf && got != size) {
        base_free(buf);
        return NULL;
    }
    *n = size;
    return buf;
}

/* Writes all n bytes to fd; returns 0 or -1. */
static int write_all(int fd, const void *p, size_t n) {
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w, n -= (size_t)w;
    }
    return 0;
}

/* Does buf (size bytes) end with the trailer of the data before it? */
static int sealed(const char *buf, size_t size) {
    trailer t;
    if (size < sizeof t) return 0;
    memcpy(&t, buf + size - sizeof t, sizeof t);
    size -= sizeof t;
    return memcmp(t.magic, TRAILER_MAGIC, sizeof t.magic) == 0 && t.n == size &&
           t.hash == rt_hash(RT_HASH_INIT, buf, size);
}

int rt_cache_get(uint64_t key, const char *ext, void **data, size_t *n) {
    char path[4200];
    if (rt_cache_path(key, ext, path, sizeof path)) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t size = 0;
    char *buf = read_all(fd, &size);
    close(fd);
    if (!buf) return 0;
    if (!sealed(buf, size)) {
        base_free(buf);
        return 0;
    }
    *data = buf;
    *n = size - sizeof(trailer);
    return 1;
}

/* FNV-1a of the first n bytes of fd, read in chunks from its start (no allocation: a shared
 * object can be megabytes, and an allocation failure must not read as a damaged entry).
 * Returns 0, or -1 on a read error or a file shorter than n. */
static int hash_prefix(int fd, size_t n, uint64_t *h) {
    char chunk[16384];
    *h = RT_HASH_INIT;
    if (lseek(fd, 0, SEEK_SET) < 0) return -1;
    while (n > 0) {
        ssize_t r = read(fd, chunk, n < sizeof chunk ? n : sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        *h = rt_hash(*h, chunk, (size_t)r), n -= (size_t)r;
    }
    return 0;
}

int rt_cache_check(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    trailer t;
    uint64_t h = 0;
    size_t size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
    int ok = size >= sizeof t && lseek(fd, (off_t)(size - sizeof t), SEEK_SET) >= 0 &&
             read(fd, &t, sizeof t) == (ssize_t)sizeof t &&
             memcmp(t.magic, TRAILER_MAGIC, sizeof t.magic) == 0 && t.n == size - sizeof t &&
             hash_prefix(fd, size - sizeof t, &h) == 0 && h == t.hash;
    close(fd);
    return ok ? 1 : -1;
}

int rt_cache_seal(const char *path) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    trailer t;
    memcpy(t.magic, TRAILER_MAGIC, sizeof t.magic);
    int bad = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode);
    t.n = bad ? 0 : (uint64_t)st.st_size;
    bad = bad || hash_prefix(fd, (size_t)t.n, &t.hash) || lseek(fd, 0, SEEK_END) < 0 ||
          write_all(fd, &t, sizeof t);
    bad |= close(fd) != 0;
    return bad ? -1 : 0;
}

void rt_cache_put(uint64_t key, const char *ext, const void *data, size_t n) {
    char path[4200], tmp[4300];
    if (rt_cache_path(key, ext, path, sizeof path)) return;
    const char *dir = rt_cache_dir();
    int k = snprintf(tmp, sizeof tmp, "%s/.%016llx.%s.XXXXXX", dir, (unsigned long long)key, ext);
    if (k <= 0 || (size_t)k >= sizeof tmp) return;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) return;
    trailer t;
    memcpy(t.magic, TRAILER_MAGIC, sizeof t.magic);
    t.n = n;
    t.hash = rt_hash(RT_HASH_INIT, data, n);
    int bad = fchmod(fd, 0644) != 0 || write_all(fd, data, n) || write_all(fd, &t, sizeof t);
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path) != 0) unlink(tmp);
}
