"""The answers the instructor's notes give are right (instructor-only: autograder/tests is not in
the handout).

The student handout states no graded answer (test_handout_answers.py), so the C++ tests it ships
can no longer check them; these checks keep them tested, with a small bank model written here the
way common/'s is (a request costs as many wavefronts as its busiest bank has distinct words, per
phase of 32 / 16 / 8 lanes for 4- / 8- / 16-byte accesses). Each number asserted here is one that
solutions/<lab>/NOTES.md states; the first test of each group reproduces a number the shipped
model or Nsight Compute gives, so that the model here is the same model.
"""

import math
import random
import unittest

BANKS = 32


def wavefronts(words_per_lane: dict[int, list[int]], width: int = 4, banks: int = BANKS) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp request: lane -> the 4-byte words it touches."""
    per_phase = {4: 32, 8: 16, 16: 8}[width] * BANKS // banks if banks == BANKS else banks
    total = ideal = 0
    for begin in range(0, 32, per_phase):
        by_bank: dict[int, set[int]] = {}
        for lane in range(begin, begin + per_phase):
            for w in words_per_lane.get(lane, []):
                by_bank.setdefault(w % banks, set()).add(w)
        if by_bank:
            total += max(len(ws) for ws in by_bank.values())
            ideal += 1
    return total, ideal


def excess(words_per_lane, width=4, banks=BANKS) -> int:
    w, i = wavefronts(words_per_lane, width, banks)
    return w - i


# ---------------------------------------------------------------- scan: the shared-memory tree

def tree_levels(block: int):
    """(phase, active threads, stride) of the Blelloch tree over 2 * block elements (scan_model.cpp)."""
    stride, active = 1, block
    while active > 0:
        yield "up", active, stride
        active, stride = active >> 1, stride << 1
    active = 1
    while active < 2 * block:
        stride >>= 1
        yield "down", active, stride
        active <<= 1


def tree_requests(block: int, slot):
    """Per level and warp: (phase, left request, right request), each lane -> [word]."""
    for phase, active, stride in tree_levels(block):
        for w in range(0, (active + 31) // 32):
            lanes = range(min(32, active - 32 * w))
            left = {l: [slot(stride * (2 * (32 * w + l) + 1) - 1)] for l in lanes}
            right = {l: [slot(stride * (2 * (32 * w + l) + 2) - 1)] for l in lanes}
            yield phase, left, right


def listed_excess(block: int, slot) -> int:
    """The `bank-model` experiment's count: each index of a level once (loads are conflict-free)."""
    return sum(excess(l) + excess(r) for _, l, r in tree_requests(block, slot))


def kernel_excess(block: int, slot) -> int:
    """What the kernel issues: the up-sweep reads left, reads and writes right; the down-sweep reads
    and writes both."""
    return sum((1 if phase == "up" else 2) * excess(l) + 2 * excess(r) for phase, l, r in tree_requests(block, slot))


def plain(i):
    return i


def one_pad(i):
    return i + (i >> 5)


def two_pads(i):
    return i + (i >> 5) + (i >> 10)


class ScanAnswers(unittest.TestCase):
    def test_the_model_here_is_the_labs(self):
        # RESULTS.md: bank-model `tree scan plain block=256`: 96 requests, excess 300;
        # Nsight Compute at n = 65536 (129 blocks of 256 threads): 67725.
        self.assertEqual(sum(2 for _ in tree_requests(256, plain)) + 16, 96)
        self.assertEqual(listed_excess(256, plain), 300)
        self.assertEqual(129 * kernel_excess(256, plain), 67725)

    def test_question_3_block_128(self):
        # 65536 elements in blocks of 256 (128 threads): 256 blocks, then one block for their sums.
        self.assertEqual(kernel_excess(128, plain), 245)
        self.assertEqual(257 * kernel_excess(128, plain), 62965)

    def test_padding(self):
        for block in (32, 64, 128, 256, 512, 1024):
            self.assertEqual(listed_excess(block, two_pads), 0, block)
        for block in (32, 64, 128, 256, 512):
            self.assertEqual(listed_excess(block, one_pad), 0, block)
        worst = max(max(wavefronts(l)[0], wavefronts(r)[0]) for _, l, r in tree_requests(1024, one_pad))
        self.assertEqual(worst, 2)

    def test_colored_walk_widths(self):
        # The direct walk: lane c < d walks word c * 32 + j. 128-bit (the compiled walk): 16 requests
        # a page, excess d - ceil(d / 8) each, 64 pages at n = 65536: Nsight Compute's count.
        def walk(d: int, width: int) -> int:
            per = width // 4
            return sum(excess({c: [c * 32 + j + k for k in range(per)] for c in range(d)}, width)
                       for j in range(0, 32, per))
        for d in range(1, 17):
            self.assertEqual(2 * walk(d, 16), 16 * (d - math.ceil(d / 8)))
            self.assertEqual(64 * 2 * walk(d, 16), [0, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 7168, 8192, 9216,
                                                     10240, 11264, 12288, 13312, 14336][d - 1])
            # 64-bit (question E1): 32 requests a page, d - ceil(d / 16) = d - 1 each: 2048 (d - 1).
            self.assertEqual(2 * walk(d, 8), 32 * (d - math.ceil(d / 16)))
            self.assertEqual(64 * 2 * walk(d, 8), 2048 * (d - 1))


# ---------------------------------------------------------------- transpose

class TransposeAnswers(unittest.TestCase):
    def test_xor_swizzle_is_conflict_free(self):
        for line in range(32):
            store = {lane: [line * 32 + (lane ^ line)] for lane in range(32)}
            load = {lane: [lane * 32 + (line ^ lane)] for lane in range(32)}
            self.assertEqual(excess(store), 0)
            self.assertEqual(excess(load), 0)

    def test_question_2_tiles_of_doubles(self):
        # A 32 x (32 + p) tile of doubles; lane x reads element (x, y): 4-byte words 2 (32 + p) x + 2 y, + 1.
        def column(p: int, y: int = 3) -> int:
            return excess({x: [2 * ((32 + p) * x + y), 2 * ((32 + p) * x + y) + 1] for x in range(32)}, width=8)
        self.assertEqual(column(0), 2 * 15)          # 16-way in each half-warp phase
        self.assertEqual(column(1), 0)                # one double of padding per row
        self.assertEqual(column(2), 2 * 1)            # an even pitch: 2-way
        self.assertTrue(all(column(p) == 0 for p in (1, 3, 5, 7)))


# ---------------------------------------------------------------- reduction

def interleaved_excess(block: int, banks: int) -> tuple[list[int], int]:
    """tree-interleaved: at stride s thread t (2 s t < block) combines x[2st], x[2st + s]; two loads
    and a store per active warp of `banks` lanes (a warp = seed 004's multiprocessor of b cores)."""
    degrees, total = [], 0
    s = 1
    while s < block:
        active = block // (2 * s)
        worst = 0
        for w in range(0, max(1, math.ceil(active / banks))):
            lanes = range(w * banks, min(active, (w + 1) * banks))
            if not lanes:
                continue
            for offset in (0, s, 0):
                words = {l - w * banks: [2 * s * l + offset] for l in lanes}
                wf, ideal = wavefronts(words, banks=banks)
                worst = max(worst, wf)
                total += wf - ideal
        degrees.append(worst)
        s *= 2
    return degrees, total


def pipeline(rows: list[list[tuple[int, int]]], swap_lane_31: bool):
    """Seed 004 Algorithm 5 on `interval` elements (lo, hi), rows of 32, the 64 words at the identity
    (None); node 32 + e = node 2e (+) node 2e + 1; lane 31 writes node 63 = node 62 (+) node 63 as
    printed, or node 63 (+) node 62 with the fix. Returns node 63 after the drain."""
    invalid = "INVALID"

    def op(a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a == invalid or b == invalid or a[1] + 1 != b[0]:
            return invalid
        return (a[0], b[1])

    y = [None] * 64
    for step in range(len(rows) + 5):
        for e in range(32):
            y[e] = rows[step][e] if step < len(rows) else None
        res = []
        for e in range(32):
            a, c = y[2 * e], y[2 * e + 1]
            res.append(op(c, a) if e == 31 and swap_lane_31 else op(a, c))
        y[32:] = res
    return y[63]


def fig8_word(node: int) -> int:
    return node // 2 if node % 2 == 0 else 32 + ((node - 1) // 2 + 16) % 32


class ReductionAnswers(unittest.TestCase):
    def test_question_1(self):
        self.assertEqual(interleaved_excess(256, 32), ([2, 4, 8, 8, 8, 4, 2, 1], 105))   # the lecture's b = 32
        self.assertEqual(interleaved_excess(256, 16), ([2, 4, 8, 16, 8, 4, 2, 1], 180))  # the question's b = 16

    def test_question_3_rows_come_out_last_to_first(self):
        def rows(n):
            return [[(32 * r + e, 32 * r + e) for e in range(32)] for r in range(n)]
        self.assertEqual(pipeline(rows(1), swap_lane_31=False), (0, 31))
        self.assertEqual(pipeline(rows(2), swap_lane_31=False), "INVALID")
        for n in (2, 3, 7):
            self.assertEqual(pipeline(rows(n), swap_lane_31=True), (0, 32 * n - 1))

    def test_question_4_the_result_store(self):
        banks = [fig8_word(32 + e) % 32 for e in range(32)]
        self.assertEqual(sorted(banks), list(range(32)))
        self.assertEqual([banks[e] for e in (0, 1, 30, 31)], [16, 0, 31, 15])

    def test_question_5_occupancy(self):
        # matrix: a 32 x 33 int32 staging matrix per warp; 228 KiB per SM, 1 KiB reserved per block.
        def warps(block_threads: int) -> int:
            w = block_threads // 32
            blocks = min(228 * 1024 // (w * 33 * 32 * 4 + 1024), 32, 64 // w)
            return blocks * w
        self.assertEqual(warps(128), 52)   # the model's test: 4-warp blocks
        self.assertEqual(warps(256), 48)   # the default block: 6 blocks of 8 warps, 75 %
        self.assertEqual(48 * 1024 // (33 * 32 * 4), 11)   # seed 004's K20c: 11 warps, 17 %


# ---------------------------------------------------------------- radix sort

def split(keys: list[int], bit: int, values: list[int] | None = None, reverse_trues: bool = False):
    """Seed 003's split of one bit: (e, f, totalFalses, t, destinations, keys out, values out).
    reverse_trues: the faulty split of question 2, a true key to n - 1 - (i - f[i])."""
    n = len(keys)
    b = [(k >> bit) & 1 for k in keys]
    e = [1 - x for x in b]
    f = [sum(e[:i]) for i in range(n)]
    total = f[-1] + e[-1]
    t = [i - f[i] + total for i in range(n)]
    dest = [(n - 1 - (i - f[i]) if reverse_trues else t[i]) if b[i] else f[i] for i in range(n)]
    out, vout = [0] * n, [0] * n
    for i in range(n):
        out[dest[i]] = keys[i]
        if values:
            vout[dest[i]] = values[i]
    return e, f, total, t, dest, out, vout


def lsd(keys: list[int], bits: int, values=None, reverse_trues=False):
    for bit in range(bits):
        *_, keys, values = split(keys, bit, values, reverse_trues)
    return keys, values


def ordered_i32(x: int) -> int:
    return (x & 0xFFFFFFFF) ^ 0x80000000


def span_bits(keys: list[int]) -> int:
    """The lab's K: 32 - clz(OR ^ AND) of the ordered keys."""
    o, a = 0, 0xFFFFFFFF
    for k in keys:
        o, a = o | ordered_i32(k), a & ordered_i32(k)
    return (o ^ a).bit_length()


class RadixSortAnswers(unittest.TestCase):
    def test_the_launch_formula_is_the_labs(self):
        # README.md, "The model": seed 003's case (2^15, K = 6) 213 launches; RESULTS.md: 1656 at 2^24.
        def split_global(log2n: int, k: int) -> int:
            return log2n + k * (2 * log2n + 3)
        self.assertEqual(split_global(15, 6), 213)
        self.assertEqual(split_global(24, 32), 1656)
        self.assertEqual(split_global(20, 20), 880)                    # question 6
        self.assertEqual(1 + 2 * 20, 41)

    def test_question_1_split(self):
        e, f, total, t, dest, out, _ = split([6, 3, 0, 5, 2, 7, 4, 1, 3, 6, 1, 5], 1)
        self.assertEqual(e, [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1])
        self.assertEqual(f, [0, 0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5])
        self.assertEqual(total, 6)
        self.assertEqual(t, [6, 7, 8, 8, 8, 9, 10, 10, 10, 11, 12, 12])
        self.assertEqual(dest, [6, 7, 0, 1, 8, 9, 2, 3, 10, 11, 4, 5])
        self.assertEqual(out, [0, 5, 4, 1, 1, 5, 6, 3, 2, 7, 3, 6])

    def test_question_2_reversed_trues(self):
        keys = [4, 7, 2, 6, 3, 5, 1, 0]
        self.assertEqual(lsd(keys, 3)[0], list(range(8)))
        self.assertEqual(lsd(keys, 1, reverse_trues=True)[0], [4, 2, 6, 0, 1, 5, 3, 7])
        self.assertEqual(lsd(keys, 2, reverse_trues=True)[0], [4, 0, 1, 5, 7, 3, 6, 2])
        self.assertEqual(lsd(keys, 3, reverse_trues=True)[0], [0, 1, 3, 2, 6, 7, 5, 4])
        self.assertEqual(lsd([2, 3], 2, reverse_trues=True)[0], [3, 2])
        self.assertTrue(all(lsd([k], 2, reverse_trues=True)[0] == [k] for k in range(4)))   # n = 1 cannot fail
        self.assertEqual(lsd([1, 1], 1, [0, 1], reverse_trues=True), ([1, 1], [1, 0]))

    def test_question_3_bit_count(self):
        keys = [40, -5, 3, 64]
        self.assertEqual(math.ceil(math.log2(64)), 6)
        out, _ = lsd([k & 0xFFFFFFFF for k in keys], 6)           # seed 003: bits 0-5 of the raw patterns
        self.assertEqual([k - (1 << 32) if k >> 31 else k for k in out], [64, 3, 40, -5])
        self.assertEqual(span_bits(keys), 32)
        self.assertEqual(span_bits([40, 3, 64]), 7)

    def test_question_4_counter_banks(self):
        def per_thread(digit, width=16):
            return wavefronts({lane: [width * lane + digit(lane)] for lane in range(32)})[0]
        self.assertEqual(per_thread(lambda l: l // 2), 1)
        self.assertEqual(per_thread(lambda l: l % 4), 8)
        self.assertEqual(per_thread(lambda l: 5), 16)               # radix_sort.cuh: all keys equal, 16-way
        self.assertEqual(per_thread(lambda l: 3, width=8), 8)
        self.assertTrue(all(wavefronts({lane: [d * 32 + lane] for lane in range(32)})[0] == 1 for d in range(16)))
        chunks = 2 ** 22 // 4096
        per_tile = math.ceil(chunks / min(2 * 132, chunks))
        self.assertEqual((per_tile, math.ceil(chunks / per_tile)), (4, 256))

    def test_question_5_look_back(self):
        tiles = math.ceil(2 ** 26 / 7680)
        self.assertEqual(tiles, 8739)
        self.assertEqual(tiles * 256, 2237184)
        self.assertAlmostEqual(4 * 4 * tiles * 256 / 1e6, 35.8, places=1)
        self.assertAlmostEqual(tiles * 145e-6, 1.27, places=2)     # ms: a chain of L2 round trips
        self.assertAlmostEqual(2 ** 26 * 8 / 3000e6, 0.18, places=2)

    def test_question_6_terms(self):
        # bytes per key from `gpulab experiment radix-sort model` (2372.0, 400.2 at 2^20, 20 bits;
        # 3764.0, 640.3 at 2^24), sigma = 3 us, 15 us a round trip, 3000 GB/s
        def ms(launches, syncs, bytes_per_key, n):
            return launches * 3e-3 + syncs * 15e-3 + bytes_per_key * n / 3e9
        self.assertAlmostEqual(ms(880, 41, 2372.0, 2 ** 20), 4.08, places=2)
        self.assertAlmostEqual(ms(40, 0, 400.2, 2 ** 20), 0.26, places=2)
        self.assertAlmostEqual(ms(880, 41, 2372.0, 2 ** 20) / ms(40, 0, 400.2, 2 ** 20), 15.7, places=1)
        self.assertAlmostEqual(ms(1656, 65, 3764.0, 2 ** 24), 26.99, places=2)
        self.assertAlmostEqual(ms(64, 0, 640.3, 2 ** 24), 3.77, places=2)
        self.assertAlmostEqual(2.61 / 213 * 1e3, 12.3, places=1)   # us per launch in seed 003's run

    def test_question_7_sectors(self):
        self.assertAlmostEqual((0.844 - 0.154) * 32, 22.1, places=1)
        per_pass = ((0.844 - 0.154) * 32 + 4) * 2 ** 24
        self.assertAlmostEqual(per_pass / 1e6, 438, delta=0.5)
        self.assertAlmostEqual(per_pass / 3e9, 0.146, places=3)
        self.assertAlmostEqual(2.11 / 8 - 0.563 / 4, 0.12, places=2)
        # The reorder (2026-11-29): 0.156 sectors, 4.875 on average per 32 keys, at 2^26 on the H200.
        self.assertAlmostEqual((7 * 5 + 4) / 8, 4.875)
        self.assertAlmostEqual((0.844 - 0.156) * 32 * 2 ** 26 / 1e9, 1.48, places=2)
        self.assertAlmostEqual((0.844 - 0.156) * 32 * 2 ** 26 / 4180e6, 0.353, places=3)
        self.assertAlmostEqual((6.76 - 3.14) / 8, 0.45, places=2)

    def test_question_8_digit_width(self):
        tiles = math.ceil(2 ** 26 / 7680)
        rows = [(r, math.ceil(32 / r), 2 ** r * 32 * 4, tiles * 2 ** r) for r in (1, 2, 4, 6, 8, 11)]
        self.assertEqual(rows, [(1, 32, 256, 17478), (2, 16, 512, 34956), (4, 8, 2048, 139824),
                                (6, 6, 8192, 559296), (8, 4, 32768, 2237184), (11, 3, 262144, 17897472)])
        self.assertEqual(7680 / 2 ** 11, 3.75)
        self.assertAlmostEqual(17897472 * 4 / 1e6, 71.6, places=1)



# ---------------------------------------------------------------- shearsort

def oem_comparators(w: int) -> list[tuple[int, int]]:
    """Batcher's odd-even merge sort on w keys (the lab's kNetwork32 loops)."""
    out = []
    p = 1
    while p < w:
        k = p
        while k >= 1:
            for j in range(k % p, w - k, 2 * k):
                for i in range(min(k, w - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        out.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return out


def naive_tile(w: int) -> tuple[int, int]:
    """(wavefronts, excess) of one tile-shear-naive tile in seed 000's model with w = b banks and lanes:
    log2 w + 1 column phases and log2 w row phases of the network, 4 requests a comparator, staging."""
    rounds = w.bit_length() - 1
    total = excess_sum = 0
    for lo, hi in oem_comparators(w):
        for e in (lo, hi, lo, hi):
            col = wavefronts({c: [w * c + e] for c in range(w)}, banks=w)
            row = wavefronts({r: [r + w * e] for r in range(w)}, banks=w)
            total += (rounds + 1) * col[0] + rounds * row[0]
            excess_sum += (rounds + 1) * (col[0] - col[1]) + rounds * (row[0] - row[1])
    for k in range(w):   # staging: lane l moves key w k + l in and out
        wf, _ = wavefronts({lane: [w * k + lane] for lane in range(w)}, banks=w)
        total += 2 * wf
    return total, excess_sum


def shear(tile: list[int], w: int, rounds: int, final: bool) -> list[int]:
    t = list(tile)
    for _ in range(rounds):
        for c in range(w):
            t[w * c:w * c + w] = sorted(t[w * c:w * c + w], reverse=c % 2 == 1)
        for r in range(w):
            t[r::w] = sorted(t[r::w])
    if final:
        for c in range(w):
            t[w * c:w * c + w] = sorted(t[w * c:w * c + w])
    return t


class ShearSortAnswers(unittest.TestCase):
    def test_the_model_here_is_the_labs(self):
        # README.md, "The model": 191 comparators, 142,104 excess per naive tile, 2560 per bitonic tile.
        self.assertEqual(len(oem_comparators(32)), 191)
        self.assertEqual(naive_tile(32), (150572, 142104))
        bitonic = 0
        for ls in range(1, 11):
            for lj in range(ls - 1, -1, -1):
                j = 1 << lj
                for c in range(16):
                    lo = {lane: [(((32 * c + lane) >> lj) << (lj + 1)) | ((32 * c + lane) & (j - 1))]
                          for lane in range(32)}
                    hi = {lane: [words[0] + j] for lane, words in lo.items()}
                    bitonic += 2 * excess(lo) + 2 * excess(hi)
        self.assertEqual(bitonic, 2560)

    def test_question_1_sixteen_banks(self):
        self.assertEqual(len(oem_comparators(16)), 63)
        total, ex = naive_tile(16)
        self.assertEqual((total, ex), (21200, 18900))
        self.assertEqual(round(100 * ex / total), 89)

    def test_question_3_the_seeds_count(self):
        rng = random.Random(3)
        for w in (4, 8, 16, 32):
            rounds = w.bit_length() - 1
            for _ in range(20):
                tile = rng.sample(range(10 ** 6), w * w)
                seeds = shear(tile, w, rounds, final=False)
                self.assertEqual(seeds.index(max(tile)), w * (w - 1))   # row 0 of the last column
                self.assertEqual(shear(tile, w, rounds + 1, final=False).index(max(tile)), w * (w - 1))
                self.assertEqual(shear(tile, w, rounds, final=True), sorted(tile))
        self.assertEqual(shear([1] + [0] * 15, 4, 2, final=False).index(1), 12)   # (a): one 1 is enough

    def test_question_4_comparisons_per_key(self):
        def shear_per_key(w):
            p = w.bit_length() - 1
            return (2 * p + 1) * len(oem_comparators(w)) / w
        def bitonic_per_key(n):
            lg = n.bit_length() - 1
            return lg * (lg + 1) / 4
        self.assertAlmostEqual(shear_per_key(16), 35.4375)
        self.assertAlmostEqual(shear_per_key(32), 65.65625)
        self.assertEqual(round(shear_per_key(16) / bitonic_per_key(256), 2), 1.97)
        self.assertEqual(round(shear_per_key(32) / bitonic_per_key(1024), 2), 2.39)

    def test_question_5_merge_path(self):
        a, b = [1, 3, 3, 5, 7, 7], [2, 3, 3, 6, 7, 8]
        def co_rank(k):
            lo, hi = max(0, k - len(b)), min(k, len(a))
            while lo < hi:
                mid = (lo + hi) // 2
                if a[mid] <= b[k - 1 - mid]:
                    lo = mid + 1
                else:
                    hi = mid
            return lo
        self.assertEqual([co_rank(k) for k in (3, 5, 9)], [2, 3, 5])
        n = 3_000_000
        passes = math.ceil(math.log2(math.ceil(n / 1024)))
        self.assertEqual((passes, 1 + 2 * passes, 8 * n * (1 + passes)), (12, 25, 312_000_000))

    def test_question_6_the_network_reorders_ties(self):
        keys = [(1, "a"), (2, ""), (1, "b"), (0, "")]
        for lo, hi in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)]:
            if keys[hi][0] < keys[lo][0]:
                keys[lo], keys[hi] = keys[hi], keys[lo]
        self.assertEqual(keys, [(0, ""), (1, "b"), (1, "a"), (2, "")])

    def test_question_7_a100_warps(self):
        def warps(d, per_warp):
            return max(min(64, min(167936 // (h * per_warp + 1024), 32) * h) for h in (1, 2, 4))
        self.assertEqual([warps(d, 148 * d - 128) for d in (16, 32, 64, 128, 256)], [64, 32, 16, 8, 4])  # b = 32
        self.assertEqual([warps(d, 276 * d - 256) for d in (16, 32, 64, 128, 256)], [36, 18, 9, 4, 2])   # b = 64
        self.assertEqual([min(64, 167936 // (128 * (d - 1))) for d in (16, 32, 64, 128, 256)], [64, 42, 20, 10, 5])

    def test_question_8_partition_bound(self):
        k = 132 * 64
        bound = 32 * k * (k * k + 1)
        self.assertEqual(f"{bound:.2e}", "1.93e+13")
        self.assertEqual(round(4 * bound / 1e12), 77)


if __name__ == "__main__":
    unittest.main()

# ---------------------------------------------------------------- bitonic: the textbook step, launches, padding

def lower_key(p: int, e: int) -> int:
    """Pair p's lower key at stride 2^e: p with a 0 bit inserted at position e."""
    return ((p >> e) << (e + 1)) | (p & ((1 << e) - 1))


def step_excess(threads: int, e: int, slot=plain, lanes: int = 32, banks: int = BANKS) -> tuple[int, int]:
    """(excess, worst degree) of one textbook step of a block: each warp loads lo, loads hi, stores lo,
    stores hi (one word each), lo = tau with a 0 inserted at bit e, hi = lo + 2^e."""
    total, worst = 0, 1
    for w in range(threads // lanes):
        lo = {l: [slot(lower_key(w * lanes + l, e))] for l in range(lanes)}
        hi = {l: [slot(lower_key(w * lanes + l, e) + (1 << e))] for l in range(lanes)}
        for req in (lo, hi, lo, hi):
            wf, ideal = wavefronts(req, banks=banks) if banks == BANKS else _wavefronts_b(req, banks)
            total += wf - ideal
            worst = max(worst, wf)
    return total, worst


def _wavefronts_b(words_per_lane: dict[int, list[int]], banks: int) -> tuple[int, int]:
    """A warp of `banks` lanes on `banks` banks (seed 000's w = b), one phase."""
    by_bank: dict[int, set[int]] = {}
    for ws in words_per_lane.values():
        for w in ws:
            by_bank.setdefault(w % banks, set()).add(w)
    return max(len(v) for v in by_bank.values()), 1


def tile_excess(threads: int, t: int, slot=plain, lanes: int = 32, banks: int = BANKS) -> tuple[int, int]:
    """(tile sort, tile merge) excess of one block: levels 1..t, then one level's strides t-1..0."""
    per = [step_excess(threads, e, slot, lanes, banks)[0] for e in range(t)]
    return sum(per[e] for s in range(1, t + 1) for e in range(s)), sum(per)


def launches(L: int, t: int, q: int = 1) -> tuple[int, int, int, int, int]:
    """R0, R2, R3, R4, R5 for n = 2^L, tiles of 2^t keys (L > t), q global strides per fused launch."""
    r0 = L * (L + 1) // 2
    r2 = 1 + r0 - t * (t + 1) // 2
    r4 = 1 + (L - t) * (L - t + 3) // 2
    r5 = 1 + sum(-(-d // q) + 1 for d in range(1, L - t + 1))
    return r0, r2, r2 - (t - 1), r4, r5


def alternating_network(keys: list[float]) -> list[tuple[int, int, list[float]]]:
    """Seed 002 Algorithm 1 on len(keys) = 2^L keys: the array after every (level, stride)."""
    a, out, n = list(keys), [], len(keys)
    s = 1
    while (1 << s) <= n:
        for e in range(s - 1, -1, -1):
            for i in range(n):
                j = i ^ (1 << e)
                if j > i:
                    up = (i >> s) & 1 == 0
                    if (a[i] > a[j]) == up:
                        a[i], a[j] = a[j], a[i]
            out.append((s, e, list(a)))
        s += 1
    return out


class BitonicAnswers(unittest.TestCase):
    def test_the_model_here_is_the_labs(self):
        # results/bank-model.csv: phase 4, block 512 (T = 1024): 2560 per tile-sort block, 320 per
        # tile merge; 1024: 5760 and 640. ncu on the H100 at n = 2^20, block 512: 5898240 for a run.
        self.assertEqual(tile_excess(512, 10), (2560, 320))
        self.assertEqual(tile_excess(1024, 11), (5760, 640))
        tiles, merges = 1024, 10
        self.assertEqual(tiles * (2560 + merges * 320), 5898240)
        self.assertEqual([step_excess(512, e)[1] for e in range(10)], [2] * 5 + [1] * 5)

    def test_question_1_phase1_at_2_22(self):
        n, L = 1 << 22, 22
        per_warp_step = step_excess(64, 0)[0] // 2                  # 4 per warp
        self.assertEqual(per_warp_step, 4)
        self.assertEqual(sum(min(s, 5) for s in range(1, L + 1)) * (n // 64) * per_warp_step, 26214400)
        self.assertEqual(sum(min(s, 5) for s in range(1, 21)) * ((1 << 20) // 64) * 4, 5898240)  # = phase 4 at 2^20

    def test_question_2_padding_moves_below_n_from_3(self):
        inf = float("inf")
        def moved(n):
            size = 1 << max(1, (n - 1).bit_length())
            keys = [float(k) for k in range(n)][::-1] + [inf] * (size - n)
            return [(s, e) for s, e, a in alternating_network(keys) if inf in a[:n]]
        self.assertEqual(moved(2), [])
        self.assertEqual(moved(3)[0], (1, 0))                       # level 1: the pair (2, 3) descending
        self.assertEqual(alternating_network([0.0, 1.0, 2.0, inf])[0][2][2], inf)

    def test_question_3_launches_at_2_30(self):
        r0, r2, r3, r4, _ = launches(30, 12)
        self.assertEqual((r0, r0, r2, r3, r4), (465, 465, 388, 377, 190))
        self.assertAlmostEqual(r0 / r4, 2.447, places=3)
        self.assertEqual(launches(24, 10)[:4], (300, 246, 237, 120))   # the lab's table
        self.assertEqual(launches(24, 11)[:4], (300, 235, 225, 105))

    def test_question_4_sixteen_banks(self):
        degrees = [step_excess(512, e, lanes=16, banks=16)[1] for e in range(10)]
        self.assertEqual(degrees, [2, 2, 2, 2] + [1] * 6)
        self.assertEqual(tile_excess(512, 10, lanes=16, banks=16), (4352, 512))

    def test_question_5_padding_and_the_swizzle(self):
        def pad(i):
            return i + (i >> 5)
        self.assertEqual([step_excess(512, e, pad)[1] for e in range(10)], [1, 2, 2, 2, 2, 1, 1, 1, 1, 1])
        self.assertEqual(tile_excess(512, 10, pad), (1920, 256))
        def swizzle(i):                                            # i ^ 31 in odd rows (NOTES.md)
            return i ^ 31 if (i >> 5) & 1 else i
        for threads in (64, 128, 256, 512, 1024):
            self.assertEqual(tile_excess(threads, threads.bit_length(), swizzle), (0, 0))

    def test_question_7_and_8_launches(self):
        self.assertEqual([launches(24, t)[3] for t in (7, 8, 9, 10, 11)], [171, 153, 136, 120, 105])
        r4 = launches(28, 11)[3]
        self.assertEqual(r4, 171)
        self.assertEqual(2 * (1 << 28) // 32 * r4, 2868903936)
        self.assertEqual((1 << 28) // 32 * 17 ** 2, 2424307712)
        self.assertEqual(launches(27, 13, 8)[4], 35)
        self.assertEqual(launches(24, 14, 9)[4], 22)                 # bitonic.cuh's design at 2^24
        self.assertEqual(launches(24, 13, 4)[4], 33)                 # the first design

