// fakenccl.c: a stand-in for libnccl.so.2, for the NCCL shim's test
// (nccl_test.go, build tag cuda) on machines without GPUs. Its ranks are
// threads of one process (the test's goroutines), device memory is host
// memory (fakecuda.c), and each collective runs when every rank has
// called it: rank 0's buffer gets the mean (or sum) of the ranks' buffers
// summed in rank order, or every rank gets root's. A rank that does not
// come within 2 s makes the others' collective end with the asynchronous
// error ncclRemoteError (6), as NCCL reports a peer that failed. With
// OCANNL_FAKE_INIT_HANG set, rank 1's ncclCommInitRank hangs for 60 s.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct {
  unsigned long key;
  int n, arrived, gen;
  const void* send[8];
  void* recv[8];
  size_t count[8];
} group;
typedef struct { group* g; int rank, async; } comm;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static group groups[8];
static unsigned long next_key = 1;

int ncclGetVersion(int* v) { *v = 21903; return 0; }
int ncclGetUniqueId(ncclUniqueId* id) {
  memset(id, 0, sizeof *id);
  pthread_mutex_lock(&mu);
  unsigned long k = next_key++ * 1000003 + (unsigned long)getpid();
  pthread_mutex_unlock(&mu);
  memcpy(id->internal, &k, sizeof k);
  return 0;
}
int ncclCommInitRank(void** out, int n, ncclUniqueId id, int rank) {
  unsigned long k;
  memcpy(&k, id.internal, sizeof k);
  if (n < 1 || n > 8 || rank < 0 || rank >= n || k == 0) return 4;  // ncclInvalidArgument
  const char* hang = getenv("OCANNL_FAKE_INIT_HANG");
  if (hang && *hang && rank == 1) sleep(60);  // a rank that never joins
  pthread_mutex_lock(&mu);
  group* g = NULL;
  for (int i = 0; i < 8 && !g; i++) if (groups[i].key == k) g = &groups[i];
  for (int i = 0; i < 8 && !g; i++) if (groups[i].key == 0) { g = &groups[i]; g->key = k; g->n = n; }
  pthread_mutex_unlock(&mu);
  if (!g || g->n != n) return 5;  // ncclInvalidUsage
  comm* c = calloc(1, sizeof *c);
  c->g = g;
  c->rank = rank;
  *out = c;
  return 0;
}
int ncclCommDestroy(void* c) { free(c); return 0; }
int ncclCommAbort(void* c) { free(c); return 0; }
int ncclCommGetAsyncError(void* c, int* r) { *r = ((comm*)c)->async; return 0; }
const char* ncclGetErrorString(int r) {
  return r == 6 ? "remote process exited or there was a network error" : r == 4 ? "invalid argument" : r == 5 ? "invalid usage" : "unhandled error";
}

// meet waits until every rank has arrived (at most 2 s), then the last
// one runs f; 0, or -1 when a rank did not come.
static int meet(comm* c, const void* send, void* recv, size_t count, void (*f)(group*, int, int, int), int a, int b, int d) {
  group* g = c->g;
  pthread_mutex_lock(&mu);
  int gen = g->gen;
  g->send[c->rank] = send;
  g->recv[c->rank] = recv;
  g->count[c->rank] = count;
  if (++g->arrived == g->n) {
    f(g, a, b, d);
    g->arrived = 0;
    g->gen++;
    pthread_cond_broadcast(&cv);
  } else {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 2;
    while (gen == g->gen) {
      if (pthread_cond_timedwait(&cv, &mu, &t) != 0) {
        g->arrived--;
        pthread_mutex_unlock(&mu);
        return -1;
      }
    }
  }
  pthread_mutex_unlock(&mu);
  return 0;
}

static void reduce(group* g, int type, int op, int root) {
  size_t n = g->count[root];
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (int r = 0; r < g->n; r++) s += type == 7 ? ((const float*)g->send[r])[i] : ((const double*)g->send[r])[i];
    if (op == 4) s /= g->n;
    if (type == 7) ((float*)g->recv[root])[i] = (float)s;
    else ((double*)g->recv[root])[i] = s;
  }
}

static void bcast(group* g, int type, int unused, int root) {
  size_t bytes = g->count[root] * (type == 7 ? 4 : 8);
  for (int r = 0; r < g->n; r++) if (r != root) memcpy(g->recv[r], g->send[root], bytes);
}

int ncclReduce(const void* send, void* recv, size_t count, int type, int op, int root, void* cp, void* stream) {
  comm* c = cp;
  if ((type != 7 && type != 8) || (op != 0 && op != 4)) return 4;
  if (meet(c, send, recv, count, reduce, type, op, root) != 0) c->async = 6;
  return 0;
}

int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, void* cp, void* stream) {
  comm* c = cp;
  if (type != 7 && type != 8) return 4;
  if (meet(c, send, recv, count, bcast, type, 0, root) != 0) c->async = 6;
  return 0;
}
