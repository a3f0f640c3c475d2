/* count_fields: counts the verifier's field family (docs/verify.md, "The random field"):
 * primes q in [2^30, 2^31) with q = 7 (mod 8) and p = 2q + 1 prime, and the sub-families in
 * which given odd primes l are quadratic residues mod p (and mod q), so the bound's family
 * size is a measured number, not a conjecture. Sieves the odd numbers below 2^32 (256 MB).
 *   cc -O2 -o /tmp/count_fields tools/count_fields.c && /tmp/count_fields */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t *comp; /* bit i: 2i + 1 is composite */
static int isprime(uint64_t n) { return n == 2 || (n & 1 && !(comp[n >> 4] >> ((n >> 1) & 7) & 1)); }
/* Jacobi symbol (a/n), n odd */
static int jacobi(uint64_t a, uint64_t n) {
    int s = 1;
    a %= n;
    while (a) {
        while (!(a & 1)) {
            a >>= 1;
            if ((n & 7) == 3 || (n & 7) == 5) s = -s;
        }
        uint64_t t = a; a = n; n = t;
        if ((a & 3) == 3 && (n & 3) == 3) s = -s;
        a %= n;
    }
    return n == 1 ? s : 0;
}

int main(void) {
    const uint64_t N = 1ull << 32;
    comp = calloc(N / 16, 1);
    if (!comp) return 1;
    comp[0] |= 1; /* 1 */
    for (uint64_t i = 3; i * i < N; i += 2)
        if (!(comp[i >> 4] >> ((i >> 1) & 7) & 1))
            for (uint64_t j = i * i; j < N; j += 2 * i) comp[j >> 4] |= (uint8_t)(1 << ((j >> 1) & 7));
    static const int sets[][4] = {{0}, {5}, {3}, {3, 5}, {3, 5, 7}, {5, 43}};
    static const int nset[] = {0, 1, 1, 2, 3, 2};
    long cnt[6][2] = {{0}};
    for (uint64_t q = (1ull << 30) + 7; q < (1ull << 31); q += 8) {
        if (!isprime(q) || !isprime(2 * q + 1)) continue;
        for (int s = 0; s < 6; s++) {
            int okp = 1, okq = 1;
            for (int i = 0; i < nset[s]; i++) {
                okp &= jacobi((uint64_t)sets[s][i], 2 * q + 1) == 1;
                okq &= jacobi((uint64_t)sets[s][i], q) == 1;
            }
            cnt[s][0] += okp, cnt[s][1] += okp && okq;
        }
    }
    printf("family: q in [2^30, 2^31), q = 7 mod 8, q and 2q+1 prime: %ld\n", cnt[0][0]);
    for (int s = 1; s < 6; s++) {
        printf("QR set {");
        for (int i = 0; i < nset[s]; i++) printf("%s%d", i ? ", " : "", sets[s][i]);
        printf("}: mod p %ld (1/%.2f), mod p and q %ld (1/%.2f)\n", cnt[s][0],
               (double)cnt[0][0] / cnt[s][0], cnt[s][1], (double)cnt[0][0] / cnt[s][1]);
    }
    return 0;
}
