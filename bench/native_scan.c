/* bench/native_scan.py builds and runs this. Raw scan speed of the joint database with the system libhyperscan: the same expressions, flags and
   64 KiB groups as diagnose's small-log path; the callback counts matches and finds each match's line
   start (what the Python callback does). */
#include <hs/hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long n_matches, line_sum;
static const char *cur;
static int on_match(unsigned int id, unsigned long long from, unsigned long long to, unsigned int flags, void *ctx) {
    unsigned long long end = to ? to - 1 : 0, ls = end;
    while (ls > 0 && cur[ls - 1] != '\n') ls--;
    n_matches++; line_sum += ls + id;
    return 0;
}
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: native_scan EXPRS GROUPS\n"); return 2; }
    FILE *f = fopen(argv[1], "r");
    char **exprs = NULL; unsigned *ids = NULL, *flags = NULL; int n = 0; char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        unsigned id; char hex[1 << 16];
        if (sscanf(line, "%u %s", &id, hex) != 2) continue;
        size_t len = strlen(hex) / 2; char *e = malloc(len + 1);
        for (size_t i = 0; i < len; i++) sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&e[i]);
        e[len] = 0;
        exprs = realloc(exprs, (n + 1) * sizeof *exprs); ids = realloc(ids, (n + 1) * sizeof *ids);
        flags = realloc(flags, (n + 1) * sizeof *flags);
        exprs[n] = e; ids[n] = id; flags[n] = HS_FLAG_MULTILINE | HS_FLAG_ALLOWEMPTY; n++;
    }
    fclose(f);
    hs_database_t *db; hs_compile_error_t *err;
    double t0 = cpu();
    if (hs_compile_multi((const char *const *)exprs, flags, ids, n, HS_MODE_BLOCK, NULL, &db, &err) != HS_SUCCESS) {
        fprintf(stderr, "compile: %s (expr %d)\n", err->message, err->expression); return 1;
    }
    printf("libhyperscan %s: %d expressions compiled in %.2f s\n", hs_version(), n, cpu() - t0);
    hs_scratch_t *scratch = NULL; hs_alloc_scratch(db, &scratch);
    f = fopen(argv[2], "rb"); fseek(f, 0, SEEK_END); long size = ftell(f); fseek(f, 0, SEEK_SET);
    char *data = malloc(size); if (fread(data, 1, size, f) != (size_t)size) return 1; fclose(f);
    for (int round = 0; round < 3; round++) {
        n_matches = line_sum = 0; double t = cpu(); long pos = 0, groups = 0, bytes = 0;
        while (pos < size) {
            unsigned long long len; memcpy(&len, data + pos, 8); pos += 8; cur = data + pos;
            hs_scan(db, cur, (unsigned)len, 0, scratch, on_match, NULL);
            pos += len; groups++; bytes += len;
        }
        double s = cpu() - t;
        printf("native: %ld groups, %.0f MB in %.2f CPU-s (%.0f MB/s), %llu matches\n", groups, bytes / 1048576.0, s, bytes / 1048576.0 / s, n_matches);
    }
    return 0;
}
