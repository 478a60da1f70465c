/*
 * salus_shm: shared memory for the bulk channel (core/platform/sharedMemory.ts).
 * Linux only. N-API, so one build serves every Node (and Electron) of the same
 * platform. Exports:
 *   createSealed(sizeBytes) -> Promise<{ fd, region }>: a memfd of exactly
 *     sizeBytes, its pages allocated now (fallocate), sealed so that it can never
 *     shrink or grow, and mapped shared and populated;
 *   mapShared(fd, sizeBytes) -> Promise<region>: maps an open file shared and
 *     populated (the file must hold at least sizeBytes);
 *   view(region, offsetBytes, lengthBytes) -> ArrayBuffer over that part of the
 *     mapping, no copy (a readback's mapped range in the job's ring);
 *   detach(view): detaches a view from view() (again: a no-op);
 *   unmap(region, fd?): detaches region.buffer at once (its views become empty),
 *     then unmaps it, and closes fd if given, on the thread pool. While views
 *     from view() are live (neither detached nor collected), the memory stays
 *     mapped for them and is unmapped when the last one goes.
 * A region is { buffer: ArrayBuffer over the mapping, handle }. The slow parts
 * (allocating and faulting in pages) run on libuv's thread pool, never on the
 * caller's thread. A mapping left alone is unmapped when its buffer is collected.
 * Mappings are not reported to V8 as external memory: they are shared pages that
 * a collection would not free (their owners unmap them explicitly), and 256 MiB
 * reported at once sets off full collections in the middle of uploads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One mapping, shared by its ArrayBuffer, its handle and its views: freed when all are collected. */
typedef struct {
  void *address;
  size_t size_bytes;
  int unmapped;     /* munmap done or queued */
  int refs;         /* JS objects that point here */
  int live_views;   /* views neither detached nor collected */
  int unmap_wanted; /* unmap() came while views were live: unmap when the last goes */
} mapping_t;

/* One view of a mapping (see view()). */
typedef struct {
  mapping_t *m;
  int released;
} view_t;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int create; /* 1: createSealed, 0: mapShared */
  int fd;
  size_t size_bytes;
  void *address;
  int error; /* errno of the step that failed, 0 if none */
  const char *step;
} job_t;

#define CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

static void drop_ref(mapping_t *m) {
  if (--m->refs > 0) return;
  if (!m->unmapped) munmap(m->address, m->size_bytes);
  free(m);
}

static void finalize_buffer(napi_env env, void *data, void *hint) {
  (void)data;
  drop_ref((mapping_t *)hint);
}

static void finalize_handle(napi_env env, void *data, void *hint) {
  (void)hint;
  drop_ref((mapping_t *)data);
}

static void run_job(napi_env env, void *data) {
  (void)env;
  job_t *job = data;
  if (job->create) {
    job->fd = memfd_create("salus-scratch", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (job->fd < 0) { job->error = errno; job->step = "memfd_create"; return; }
    if (ftruncate(job->fd, (off_t)job->size_bytes) != 0) { job->error = errno; job->step = "ftruncate"; return; }
    if (fallocate(job->fd, 0, 0, (off_t)job->size_bytes) != 0) { job->error = errno; job->step = "fallocate"; return; }
    if (fcntl(job->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) { job->error = errno; job->step = "seal"; return; }
  } else {
    struct stat st;
    if (fstat(job->fd, &st) != 0) { job->error = errno; job->step = "fstat"; return; }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < job->size_bytes) { job->error = EINVAL; job->step = "size"; return; }
  }
  void *address = mmap(NULL, job->size_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, job->fd, 0);
  if (address == MAP_FAILED) { job->error = errno; job->step = "mmap"; return; }
  job->address = address;
}

/* { buffer, handle } over a new mapping, or NULL with an exception pending. */
static napi_value make_region(napi_env env, void *address, size_t size_bytes) {
  mapping_t *m = malloc(sizeof *m);
  if (!m) { munmap(address, size_bytes); napi_throw_error(env, NULL, "out of memory"); return NULL; }
  m->address = address;
  m->size_bytes = size_bytes;
  m->unmapped = 0;
  m->refs = 2;
  m->live_views = 0;
  m->unmap_wanted = 0;
  napi_value buffer, handle, region;
  if (napi_create_external_arraybuffer(env, address, size_bytes, finalize_buffer, m, &buffer) != napi_ok) {
    /* Runtimes with a V8 sandbox (Electron's) refuse memory from outside it. */
    munmap(address, size_bytes);
    free(m);
    napi_throw_error(env, NULL, "this runtime does not allow external ArrayBuffers");
    return NULL;
  }
  if (napi_create_external(env, m, finalize_handle, NULL, &handle) != napi_ok) { m->refs--; return NULL; }
  CHECK(napi_create_object(env, &region));
  CHECK(napi_set_named_property(env, region, "buffer", buffer));
  CHECK(napi_set_named_property(env, region, "handle", handle));
  return region;
}

static void reject_errno(napi_env env, napi_deferred deferred, const char *step, int error) {
  char message[160];
  snprintf(message, sizeof message, "%s: %s", step, strerror(error));
  napi_value text, value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &value);
  napi_reject_deferred(env, deferred, value);
}

static void complete_job(napi_env env, napi_status status, void *data) {
  job_t *job = data;
  if (status != napi_ok && !job->error) { job->error = ECANCELED; job->step = "work"; }
  if (job->error) {
    if (job->address) munmap(job->address, job->size_bytes);
    if (job->create && job->fd >= 0) close(job->fd);
    reject_errno(env, job->deferred, job->step, job->error);
  } else {
    napi_value region = make_region(env, job->address, job->size_bytes), result = region, fd;
    if (region && job->create) {
      napi_create_object(env, &result);
      napi_create_int32(env, job->fd, &fd);
      napi_set_named_property(env, result, "fd", fd);
      napi_set_named_property(env, result, "region", region);
    }
    if (region) {
      napi_resolve_deferred(env, job->deferred, result);
    } else {
      napi_value error;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (pending) napi_get_and_clear_last_exception(env, &error);
      else napi_get_undefined(env, &error);
      if (job->create) close(job->fd);
      napi_reject_deferred(env, job->deferred, error);
    }
  }
  napi_delete_async_work(env, job->work);
  free(job);
}

/* Reads an integer from `least` to 2^48 into `out`; else throws a RangeError saying `what`. */
static int read_integer(napi_env env, napi_value value, double least, const char *what, size_t *out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= least) || number > 281474976710656.0 || number != (double)(uint64_t)number) {
    napi_throw_range_error(env, NULL, what);
    return 0;
  }
  *out = (size_t)number;
  return 1;
}

/* Reads a size in bytes: a positive integer no larger than 2^48. */
static int read_size(napi_env env, napi_value value, size_t *size_bytes) {
  return read_integer(env, value, 1, "sizeBytes must be a positive integer", size_bytes);
}

/* Queues the slow part on the thread pool; the promise settles in complete_job. */
static napi_value start_job(napi_env env, int create, int fd, size_t size_bytes) {
  job_t *job = calloc(1, sizeof *job);
  if (!job) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  job->create = create;
  job->fd = fd;
  job->size_bytes = size_bytes;
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok) { free(job); return NULL; }
  napi_create_string_utf8(env, "salus_shm", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, run_job, complete_job, job, &job->work);
  napi_queue_async_work(env, job->work);
  return promise;
}

/* Missing arguments arrive as undefined, which the checks refuse. */
static napi_value create_sealed(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  size_t size_bytes;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (!read_size(env, argv[0], &size_bytes)) return NULL;
  return start_job(env, 1, -1, size_bytes);
}

static napi_value map_shared(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  size_t size_bytes;
  int32_t fd = -1;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "fd must be an open file descriptor");
    return NULL;
  }
  if (!read_size(env, argv[1], &size_bytes)) return NULL;
  return start_job(env, 0, fd, size_bytes);
}

/* Unmapping and the last close of a ring free its pages: slow for 256 MiB, so off the caller's thread. */
typedef struct {
  napi_async_work work;
  void *address;
  size_t size_bytes;
  int fd;
} release_t;

static void run_release(napi_env env, void *data) {
  (void)env;
  release_t *release = data;
  munmap(release->address, release->size_bytes);
  if (release->fd >= 0) close(release->fd);
}

static void complete_release(napi_env env, napi_status status, void *data) {
  (void)status;
  release_t *release = data;
  napi_delete_async_work(env, release->work);
  free(release);
}

/* Queues munmap (and close of fd, if >= 0) on the thread pool. */
static void queue_release(napi_env env, void *address, size_t size_bytes, int fd) {
  napi_value name;
  release_t *release = malloc(sizeof *release);
  if (!release) {
    munmap(address, size_bytes);
    if (fd >= 0) close(fd);
    return;
  }
  release->address = address;
  release->size_bytes = size_bytes;
  release->fd = fd;
  napi_create_string_utf8(env, "salus_shm_release", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, run_release, complete_release, release, &release->work);
  napi_queue_async_work(env, release->work);
}

/* The mapping behind a region's handle, or NULL with a TypeError thrown. */
static mapping_t *mapping_of(napi_env env, napi_value region, napi_value *buffer) {
  napi_value handle;
  mapping_t *m = NULL;
  if (napi_get_named_property(env, region, "buffer", buffer) != napi_ok
      || napi_get_named_property(env, region, "handle", &handle) != napi_ok
      || napi_get_value_external(env, handle, (void **)&m) != napi_ok || !m) {
    napi_throw_type_error(env, NULL, "expected a region from createSealed or mapShared");
    return NULL;
  }
  return m;
}

/*
 * A view is gone (detached or collected): the last one lets a wanted unmap
 * happen, on the thread pool when `env` may queue work, else now (a finalizer
 * may run while Node is shutting down, when no work can be queued).
 */
static void release_view(napi_env env, view_t *v) {
  if (v->released) return;
  v->released = 1;
  mapping_t *m = v->m;
  if (--m->live_views == 0 && m->unmap_wanted && !m->unmapped) {
    m->unmapped = 1;
    if (env) queue_release(env, m->address, m->size_bytes, -1);
    else munmap(m->address, m->size_bytes);
  }
}

static void finalize_view(napi_env env, void *data, void *hint) {
  (void)env;
  (void)data;
  view_t *v = hint;
  release_view(NULL, v);
  drop_ref(v->m);
  free(v);
}

/* Reads a non-negative integer no larger than 2^48 (an offset or a length). */
static int read_extent(napi_env env, napi_value value, size_t *out) {
  return read_integer(env, value, 0, "offset and length must be non-negative integers", out);
}

/* view(region, offsetBytes, lengthBytes): an ArrayBuffer over that part of the mapping, without a copy. */
static napi_value view(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], buffer, result;
  size_t offset, length;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  mapping_t *m = mapping_of(env, argv[0], &buffer);
  if (!m) return NULL;
  if (!read_extent(env, argv[1], &offset) || !read_extent(env, argv[2], &length)) return NULL;
  if (m->unmapped || m->unmap_wanted) {
    napi_throw_error(env, NULL, "the region is unmapped");
    return NULL;
  }
  if (length == 0 || offset > m->size_bytes || length > m->size_bytes - offset) {
    napi_throw_range_error(env, NULL, "the view must be a non-empty part of the region");
    return NULL;
  }
  view_t *v = malloc(sizeof *v);
  if (!v) { napi_throw_error(env, NULL, "out of memory"); return NULL; }
  v->m = m;
  v->released = 0;
  if (napi_create_external_arraybuffer(env, (char *)m->address + offset, length, finalize_view, v, &result) != napi_ok) {
    free(v);
    napi_throw_error(env, NULL, "this runtime does not allow external ArrayBuffers");
    return NULL;
  }
  m->refs++;
  m->live_views++;
  /* detach() finds the view's record through this wrap (freed by finalize_view, not by the wrap). */
  if (napi_wrap(env, result, v, NULL, NULL, NULL) != napi_ok) return NULL;
  return result;
}

/* detach(view): detaches a view from view() now; a view already detached (or anything else) is left alone. */
static napi_value detach(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  view_t *v = NULL;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_remove_wrap(env, argv[0], (void **)&v) != napi_ok || !v) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) {
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    return NULL;
  }
  CHECK(napi_detach_arraybuffer(env, argv[0]));
  release_view(env, v);
  return NULL;
}

/* unmap(region, fd?): detaches now; unmaps (and closes fd, if given) on the thread pool, once no view is live. */
static napi_value unmap(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], buffer;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  mapping_t *m = mapping_of(env, argv[0], &buffer);
  if (!m) return NULL;
  int32_t fd = -1;
  napi_valuetype type;
  if (napi_typeof(env, argv[1], &type) == napi_ok && type == napi_number) napi_get_value_int32(env, argv[1], &fd);
  if (m->unmapped || m->unmap_wanted) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  /* Detached first, so that no view of it can reach the memory once it is gone. */
  CHECK(napi_detach_arraybuffer(env, buffer));
  if (m->live_views > 0) {
    /* Views from view() still point here: the pages stay until the last of them goes. */
    m->unmap_wanted = 1;
    if (fd >= 0) close(fd);
    return NULL;
  }
  m->unmapped = 1;
  queue_release(env, m->address, m->size_bytes, fd);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
    { "createSealed", NULL, create_sealed, NULL, NULL, NULL, napi_default, NULL },
    { "mapShared", NULL, map_shared, NULL, NULL, NULL, napi_default, NULL },
    { "view", NULL, view, NULL, NULL, NULL, napi_default, NULL },
    { "detach", NULL, detach, NULL, NULL, NULL, napi_default, NULL },
    { "unmap", NULL, unmap, NULL, NULL, NULL, napi_default, NULL },
  };
  CHECK(napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
