// sparse_product.cu — one R1CS matrix times the assignment over Fr (A·z, B·z, C·z of
// the Groth16 quotient), from the matrix in compressed rows (core's SparseMatrixBufs).
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// Inputs (Fr: 8 x u32, Montgomery form, < r):
//   row_starts  u32[rows + 1]   row r holds the entries row_starts[r] .. row_starts[r + 1]
//                               (offsets in entries, not words; non-decreasing)
//   entries     u32[2 entry_count]  entry k: words 2k (its column, an index into z) and
//                               2k + 1 (its coefficient's index into coefficients);
//                               entry_count < 2^32, so word indices are u64
//   coefficients Fr[coefficient_count]  coefficients[0] = 1 and coefficients[1] = -1
//                               always: those two are never read, z is added or
//                               subtracted directly (nearly every entry of a real circuit)
//   z           Fr[z_len]       the assignment, z_len >= 1
// Output:
//   out         Fr[n]           out[r] = sum over row r's entries of coefficient * z[column]
//                               for r < rows, 0 for rows <= r < n (so that out is ready
//                               for the NTTs whatever it held); rows <= n < 2^32
//
// extern "C" __global__ void sparse_product(Fr* out, const u32* row_starts, const u32* entries,
//     const Fr* coefficients, const Fr* z, u32 rows, u32 n, u32 entry_count,
//     u32 coefficient_count, u32 z_len)                                   THREADS = n
//   1-D, any blockDim.x (256 suggested), gridDim.x = max(1, ceil(n / blockDim.x)); each
//   thread writes its row's out[r] once and nothing else, so any order of the threads
//   is a valid schedule. One thread a row: R1CS rows hold 1-4 entries, a long row is a
//   longer loop of the same thread.
//   Indices outside the buffers (which core's checked layout never stages) read
//   nothing: an entry whose column is z_len or more, or whose coefficient index is
//   coefficient_count or more, adds nothing, and a row's end past entry_count stops
//   there; a bad index gives a wrong value, never a read outside the buffers.
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

extern "C" __global__ void sparse_product(Fr* out, const u32* row_starts, const u32* entries, const Fr* coefficients,
                                          const Fr* z, u32 rows, u32 n, u32 entry_count, u32 coefficient_count,
                                          u32 z_len) {
    const u32 r = CRU_THREAD_X;
    if (r >= n) return;
    Fr sum = Fr::zero();
    if (r < rows) {
        const u32 start = row_starts[r];
        const u32 stop = row_starts[r + 1];
        const u32 end = stop < entry_count ? stop : entry_count;
        for (u32 k = start; k < end; k++) {
            const u64 w = 2 * (u64)k;
            const u32 column = entries[w], index = entries[w + 1];
            if (column >= z_len) continue;
            const Fr value = z[column];
            if (index == 0) {
                sum = fadd(sum, value);
            } else if (index == 1) {
                sum = fsub(sum, value);
            } else if (index < coefficient_count) {
                // Loaded whole first (two 16-byte loads; fmul's operand by reference
                // otherwise reloads its words from memory in every row), then the
                // wide-pair product, as ntt.cu's (half the SASS of the narrow one).
                const Fr coefficient = coefficients[index];
                sum = fadd(sum, fmul<FrCfg, true>(coefficient, value));
            }
        }
    }
    out[r] = sum;
}
