/* profile.c: where a machine's cost profile lives and its file format. The profile is kept in
 * the settings' profile folder ($XDG_CACHE_HOME/fastgemm, else $HOME/.cache/fastgemm) under a
 * name made of the GPU, the CPU, the CPU BLAS and the CPUs the process may use, so that every
 * later process on the same machine reads it back. Format, version 2:
 *     fastgemm-profile 2
 *     t0 <float s> <double s>
 *     bw <bytes/s>
 *     kernel <float flop/s> <double flop/s>
 *     cpu_s <11 times>  cpu_d ...  gpu_s ...  gpu_d ...  (seconds per call of the sizes) */
#define _GNU_SOURCE
#include "backends/backend.h"
#include "core/model.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void append_key(char *key, size_t len, const char *part)
{
    size_t n = strlen(key);
    if (n && n + 1 < len) key[n++] = '_';
    for (; *part && n + 1 < len; part++) {
        char c = *part;
        if (!isalnum((unsigned char)c)) c = '-';
        if (c == '-' && n && (key[n - 1] == '-' || key[n - 1] == '_')) continue;
        key[n++] = c;
    }
    key[n] = 0;
}

void fg_profile_path(const fg_settings *s, int device, fg_abi abi, char *path, size_t len)
{
    path[0] = 0;
    if (!s->profile_dir[0]) return;

    char key[512] = "", gpu[256], cpu[256] = "cpu", line[512];
    fg_gpu_name(device, gpu, sizeof gpu);
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            snprintf(cpu, sizeof cpu, "%s", colon + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
    cpu_set_t set;
    int ncpu = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    char count[64];
    const char *threads = s->blas_threads;
    snprintf(count, sizeof count, "%dcpus%s%s", ncpu, threads[0] ? "-t" : "", threads);
    append_key(key, sizeof key, gpu[0] ? gpu : "gpu");
    append_key(key, sizeof key, cpu);
    const char *blas = fg_cpu_blas_path(abi), *slash = strrchr(blas, '/');
    append_key(key, sizeof key, slash ? slash + 1 : blas);
    append_key(key, sizeof key, count);
    snprintf(path, len, "%s/%s.profile", s->profile_dir, key);
}

static int make_dirs(const char *path) /* every folder above path's last component */
{
    char p[1200];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return 0;
}

int fg_profile_save(const fg_profile *p, const char *path)
{
    if (!path[0] || make_dirs(path) != 0) return -1;
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "fastgemm-profile 2\nt0 %.9g %.9g\nbw %.9g\nkernel %.9g %.9g\n", p->t0[0], p->t0[1],
            p->bw, p->kernel[0], p->kernel[1]);
    static const char *const names[4] = {"cpu_s", "cpu_d", "gpu_s", "gpu_d"};
    for (int r = 0; r < 4; r++) {
        const double *t = r < 2 ? p->cpu[r] : p->gpu[r - 2];
        fprintf(f, "%s", names[r]);
        for (int i = 0; i < FG_PROFILE_NPTS; i++) fprintf(f, " %.9g", t[i]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int fg_profile_load(fg_profile *p, const char *path)
{
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f) return -1;
    char word[32];
    int version = 0, got = 0;
    if (fscanf(f, "%31s %d", word, &version) != 2 || strcmp(word, "fastgemm-profile") || version != 2) {
        fclose(f);
        return -1;
    }
    while (fscanf(f, "%31s", word) == 1) {
        double *dst = NULL;
        int count = FG_PROFILE_NPTS;
        if (!strcmp(word, "t0")) dst = p->t0, count = 2;
        else if (!strcmp(word, "bw")) dst = &p->bw, count = 1;
        else if (!strcmp(word, "kernel")) dst = p->kernel, count = 2;
        else if (!strcmp(word, "cpu_s")) dst = p->cpu[0];
        else if (!strcmp(word, "cpu_d")) dst = p->cpu[1];
        else if (!strcmp(word, "gpu_s")) dst = p->gpu[0];
        else if (!strcmp(word, "gpu_d")) dst = p->gpu[1];
        if (!dst) break;
        for (int i = 0; i < count; i++)
            if (fscanf(f, "%lf", &dst[i]) != 1 || !(dst[i] >= 0)) goto out;
        got++;
    }
out:
    fclose(f);
    return got == 7 && p->bw > 0 && p->kernel[0] > 0 && p->kernel[1] > 0 && p->t0[0] > 0 && p->t0[1] > 0 ? 0 : -1;
}
