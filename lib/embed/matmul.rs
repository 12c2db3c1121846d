//! `Y = X · Wᵀ + b`, the one heavy operation of a BERT: `X` is n rows of
//! k, `W` is m rows of k (a linear layer's weight as PyTorch stores it,
//! out × in).
//!
//! W is first packed in panels of 16 of its rows, laid out column by
//! column, so the kernel's inner step is one broadcast value of X times
//! 16 contiguous values of W into 4 × 16 sums held in registers (the
//! outer-product kernel of BLAS libraries): 2 loads of W and 4 of X per
//! 64 multiply-adds, where dot products of rows needed one load per
//! multiply-add and gave a third of the speed. Blocks of X's rows go to
//! the machine's threads (std::thread::scope). The sums are written in
//! lanes so the compiler vectorizes them; on a CPU with AVX2 and FMA
//! (found at run time) the same code is compiled for them, without
//! making the executable need them.

/// Rows of X a thread takes at a time: 32 rows of 1536 f32s stay in L2.
const BLOCK: usize = 32;
/// The kernel's tile: MR rows of X by NR rows of W.
const MR: usize = 4;
const NR: usize = 16;

/// `y` (n × m) = `x` (n × k) · `w` (m × k)ᵀ + `bias` (m), `w` given
/// packed ([`pack`]: a model's weights are packed once, at load).
pub fn linear(x: &[f32], packed: &[f32], bias: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
    let mut y = vec![0.0f32; n * m];
    matmul_packed(x, packed, &mut y, n, k, m);
    for row in y.chunks_exact_mut(m.max(1)) {
        for (v, b) in row.iter_mut().zip(bias) {
            *v += b;
        }
    }
    y
}

/// `y` (n × m) = `x` (n × k) · `w` (m × k)ᵀ, `w` packed, over the
/// machine's threads.
fn matmul_packed(x: &[f32], packed: &[f32], y: &mut [f32], n: usize, k: usize, m: usize) {
    if n == 0 || m == 0 {
        return;
    }
    let threads = threads().min(n.div_ceil(BLOCK));
    // Enough work to be worth a thread: starting one costs as much as
    // some million multiplies (attention's per-head products, 95 x 32 x
    // 95, took 3 times longer on two threads than on one).
    if threads <= 1 || n * m * k < 1 << 21 {
        packed_block(x, packed, y, k, m);
        return;
    }
    let rows = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (xs, ys) in x.chunks(rows * k).zip(y.chunks_mut(rows * m)) {
            s.spawn(move || packed_block(xs, packed, ys, k, m));
        }
    });
}

/// W's rows in panels of NR, each panel column by column (`k` columns
/// of NR values), the last padded with zeros.
pub fn pack(w: &[f32], k: usize, m: usize) -> Vec<f32> {
    let panels = m.div_ceil(NR);
    let mut out = vec![0.0f32; panels * NR * k];
    for (panel, chunk) in out.chunks_exact_mut(NR * k).enumerate() {
        for jj in 0..NR.min(m - panel * NR) {
            let row = &w[(panel * NR + jj) * k..][..k];
            for (p, &v) in row.iter().enumerate() {
                chunk[p * NR + jj] = v;
            }
        }
    }
    out
}

/// The CPUs this process may use, read once.
pub fn threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`matmul_t`] on this thread alone.
pub fn block(x: &[f32], w: &[f32], y: &mut [f32], k: usize, m: usize) {
    packed_block(x, &pack(w, k, m), y, k, m);
}

fn packed_block(x: &[f32], packed: &[f32], y: &mut [f32], k: usize, m: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // The one unsafe call of this crate: a function compiled for AVX2
        // and FMA, called only after the CPU was found to have both.
        #[allow(unsafe_code)]
        unsafe {
            block_avx2(x, packed, y, k, m)
        };
        return;
    }
    kernel::<false>(x, packed, y, k, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn block_avx2(x: &[f32], packed: &[f32], y: &mut [f32], k: usize, m: usize) {
    kernel::<true>(x, packed, y, k, m);
}

#[inline(always)]
fn madd<const FMA: bool>(acc: f32, a: f32, b: f32) -> f32 {
    // Without the FMA instruction `mul_add` is a slow library call.
    if FMA { a.mul_add(b, acc) } else { acc + a * b }
}

#[inline(always)]
fn kernel<const FMA: bool>(x: &[f32], packed: &[f32], y: &mut [f32], k: usize, m: usize) {
    if k == 0 {
        y.fill(0.0);
        return;
    }
    let n = x.len() / k;
    for i0 in (0..n).step_by(BLOCK) {
        let i1 = (i0 + BLOCK).min(n);
        for (panel, wp) in packed.chunks_exact(NR * k).enumerate() {
            let j0 = panel * NR;
            let cols = NR.min(m - j0);
            let mut i = i0;
            while i < i1 {
                let rows = MR.min(i1 - i);
                // Rows past the end repeat the last; their sums are dropped.
                let xr: [&[f32]; MR] =
                    std::array::from_fn(|r| &x[(i + r.min(rows - 1)) * k..][..k]);
                let mut acc = [[0.0f32; NR]; MR];
                for (p, w) in wp.chunks_exact(NR).enumerate() {
                    for r in 0..MR {
                        let a = xr[r][p];
                        for l in 0..NR {
                            acc[r][l] = madd::<FMA>(acc[r][l], a, w[l]);
                        }
                    }
                }
                for (r, sums) in acc.iter().enumerate().take(rows) {
                    y[(i + r) * m + j0..][..cols].copy_from_slice(&sums[..cols]);
                }
                i += rows;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_product_at_every_shape() {
        let mut seed = 7u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed % 1000) as f32 / 500.0 - 1.0
        };
        // Tails of every kind, and (300 x 100 x 90) one split over threads.
        for &(n, k, m) in &[
            (1, 1, 1),
            (3, 9, 5),
            (2, 8, 4),
            (70, 37, 13),
            (65, 384, 33),
            (300, 100, 90),
        ] {
            let x: Vec<f32> = (0..n * k).map(|_| rnd()).collect();
            let w: Vec<f32> = (0..m * k).map(|_| rnd()).collect();
            let b: Vec<f32> = (0..m).map(|_| rnd()).collect();
            let y = linear(&x, &pack(&w, k, m), &b, n, k, m);
            // The kernel without FMA, which CPUs without AVX2 run.
            let mut plain = vec![0.0f32; n * m];
            kernel::<false>(&x, &pack(&w, k, m), &mut plain, k, m);
            for i in 0..n {
                for j in 0..m {
                    let want: f64 = b[j] as f64
                        + (0..k)
                            .map(|p| x[i * k + p] as f64 * w[j * k + p] as f64)
                            .sum::<f64>();
                    assert!(
                        (y[i * m + j] as f64 - want).abs() < 1e-4,
                        "{n}x{k}x{m} at {i},{j}"
                    );
                    let plain = plain[i * m + j] as f64 + b[j] as f64;
                    assert!((plain - want).abs() < 1e-4, "{n}x{k}x{m} at {i},{j}");
                }
            }
        }
    }
}
