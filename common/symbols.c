/* symbols.c: finding the program's own definitions of a BLAS name. When libfastgemm is
 * preloaded, the BLAS the program uses is "the next definition" of each name: the first one
 * outside libfastgemm in the process. That BLAS may have been loaded into a local scope (a
 * Python extension module's bundled OpenBLAS is), where dlsym(RTLD_NEXT) does not look, and the
 * process may hold other copies of libfastgemm (an installed one linked, a build's preloaded),
 * which are never a CPU BLAS. */
#define _GNU_SOURCE
#include "common/fg.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The loaded object that defines the code or data at address p, or NULL. */
static struct link_map *object_of(const void *p)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!p || !dladdr1(p, &info, (void **)&map, RTLD_DL_LINKMAP)) return NULL;
    return map;
}

/* 1 when the object `map` is a libfastgemm: it defines fastgemm_version itself. */
static int is_fastgemm(struct link_map *map)
{
    void *h = dlopen(map->l_name[0] ? map->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *v = dlsym(h, "fastgemm_version");
    int yes = v && object_of(v) == map;
    dlclose(h);
    return yes;
}

/* This libfastgemm's own object. */
static struct link_map *self(void) { return object_of((const void *)&self); }

int fg_handle_is_fastgemm(void *handle)
{
    struct link_map *map = NULL;
    return handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && is_fastgemm(map);
}

/* The loaded objects in load order (local scopes included), listed under the loader's lock:
 * counted first, then copied (objects loaded in between are not searched). */
typedef struct {
    char name[512];
    uintptr_t addr;
} object;
typedef struct {
    object *v;
    int n, cap;
} objects;

static int count_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size;
    ++*(int *)arg;
    return 0;
}

static int list_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    objects *o = arg;
    if (o->n == o->cap) return 1;
    snprintf(o->v[o->n].name, sizeof o->v[o->n].name, "%s", info->dlpi_name ? info->dlpi_name : "");
    o->v[o->n++].addr = info->dlpi_addr;
    return 0;
}

void *fg_next_symbol(const char *name, const char **skipped)
{
    static _Thread_local char skipped_name[512];
    if (skipped) *skipped = NULL;
    /* The usual case: the next definition in the global search order, not a libfastgemm. */
    void *p = dlsym(RTLD_NEXT, name);
    struct link_map *map = object_of(p);
    if (map && !is_fastgemm(map)) return p;
    /* Otherwise every loaded object in load order: the first one that defines the name itself
     * (not through a dependency) and is no libfastgemm. */
    int count = 0;
    dl_iterate_phdr(count_object, &count);
    objects o = {malloc((size_t)count * sizeof(object)), 0, count};
    if (!o.v) return NULL;
    dl_iterate_phdr(list_object, &o);
    struct link_map *ours = self();
    void *found = NULL;
    for (int i = 0; i < o.n && !found; i++) {
        void *h = dlopen(o.v[i].name[0] ? o.v[i].name : NULL, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *s = dlsym(h, name);
        dlclose(h);
        struct link_map *m = object_of(s);
        if (!m || m == ours || m->l_addr != o.v[i].addr) continue;
        if (!is_fastgemm(m)) {
            found = s;
        } else if (skipped && !*skipped) {
            snprintf(skipped_name, sizeof skipped_name, "%s", m->l_name);
            *skipped = skipped_name;
        }
    }
    free(o.v);
    return found;
}
