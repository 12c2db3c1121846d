//! `Y = X · Wᵀ + b`, the one heavy operation of a BERT: `X` is n rows of
//! k, `W` is m rows of k (a linear layer's weight as PyTorch stores it,
//! out × in), so every dot product runs over two contiguous rows.
//!
//! Tiles of 2 rows of X by 4 rows of W share their loads (8 sums, 6 row
//! reads); a block of X rows is kept hot in cache while W streams past
//! it; blocks go to the machine's threads (std::thread::scope). Sums run
//! in 8 lanes so the compiler vectorizes them; on a CPU with AVX2 and FMA
//! (found at run time) the same code is compiled for them, which doubles
//! its speed without making the executable need them.

/// Rows of X a thread takes at a time: 32 rows of 1536 f32s stay in L2.
const BLOCK: usize = 32;

/// `y` (n × m) = `x` (n × k) · `w` (m × k)ᵀ + `bias` (m).
pub fn linear(x: &[f32], w: &[f32], bias: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
    let mut y = vec![0.0f32; n * m];
    matmul_t(x, w, &mut y, n, k, m);
    for row in y.chunks_exact_mut(m.max(1)) {
        for (v, b) in row.iter_mut().zip(bias) {
            *v += b;
        }
    }
    y
}

/// `y` (n × m) = `x` (n × k) · `w` (m × k)ᵀ, over the machine's threads.
pub fn matmul_t(x: &[f32], w: &[f32], y: &mut [f32], n: usize, k: usize, m: usize) {
    if n == 0 || m == 0 {
        return;
    }
    let threads = threads().min(n.div_ceil(BLOCK));
    // Enough work to be worth a thread: a few hundred thousand multiplies.
    if threads <= 1 || n * m * k < 1 << 18 {
        block(x, w, y, k, m);
        return;
    }
    let rows = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (xs, ys) in x.chunks(rows * k).zip(y.chunks_mut(rows * m)) {
            s.spawn(move || block(xs, w, ys, k, m));
        }
    });
}

/// The CPUs this process may use, read once.
pub fn threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn block(x: &[f32], w: &[f32], y: &mut [f32], k: usize, m: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // The one unsafe call of this crate: a function compiled for AVX2
        // and FMA, called only after the CPU was found to have both.
        #[allow(unsafe_code)]
        unsafe {
            block_avx2(x, w, y, k, m)
        };
        return;
    }
    block_any(x, w, y, k, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn block_avx2(x: &[f32], w: &[f32], y: &mut [f32], k: usize, m: usize) {
    kernel::<true>(x, w, y, k, m);
}

fn block_any(x: &[f32], w: &[f32], y: &mut [f32], k: usize, m: usize) {
    kernel::<false>(x, w, y, k, m);
}

/// Lanes summed side by side.
const L: usize = 8;

#[inline(always)]
fn madd<const FMA: bool>(acc: f32, a: f32, b: f32) -> f32 {
    // Without the FMA instruction `mul_add` is a slow library call.
    if FMA { a.mul_add(b, acc) } else { acc + a * b }
}

#[inline(always)]
fn kernel<const FMA: bool>(x: &[f32], w: &[f32], y: &mut [f32], k: usize, m: usize) {
    let n = x.len() / k.max(1);
    for i0 in (0..n).step_by(BLOCK) {
        let i1 = (i0 + BLOCK).min(n);
        let mut j = 0;
        while j + 4 <= m {
            let mut i = i0;
            while i + 2 <= i1 {
                let s = tile_2x4::<FMA>(
                    [&x[i * k..(i + 1) * k], &x[(i + 1) * k..(i + 2) * k]],
                    [
                        &w[j * k..(j + 1) * k],
                        &w[(j + 1) * k..(j + 2) * k],
                        &w[(j + 2) * k..(j + 3) * k],
                        &w[(j + 3) * k..(j + 4) * k],
                    ],
                );
                y[i * m + j..i * m + j + 4].copy_from_slice(&s[0]);
                y[(i + 1) * m + j..(i + 1) * m + j + 4].copy_from_slice(&s[1]);
                i += 2;
            }
            for i in i..i1 {
                for jj in j..j + 4 {
                    y[i * m + jj] = dot::<FMA>(&x[i * k..(i + 1) * k], &w[jj * k..(jj + 1) * k]);
                }
            }
            j += 4;
        }
        for jj in j..m {
            for i in i0..i1 {
                y[i * m + jj] = dot::<FMA>(&x[i * k..(i + 1) * k], &w[jj * k..(jj + 1) * k]);
            }
        }
    }
}

#[inline(always)]
fn tile_2x4<const FMA: bool>(a: [&[f32]; 2], b: [&[f32]; 4]) -> [[f32; 4]; 2] {
    let k = a[0].len();
    let full = k / L * L;
    let mut acc = [[0.0f32; L]; 8];
    let rows = a[0][..full]
        .chunks_exact(L)
        .zip(a[1][..full].chunks_exact(L))
        .zip(b[0][..full].chunks_exact(L))
        .zip(b[1][..full].chunks_exact(L))
        .zip(b[2][..full].chunks_exact(L))
        .zip(b[3][..full].chunks_exact(L));
    for (((((a0, a1), b0), b1), b2), b3) in rows {
        for l in 0..L {
            acc[0][l] = madd::<FMA>(acc[0][l], a0[l], b0[l]);
            acc[1][l] = madd::<FMA>(acc[1][l], a0[l], b1[l]);
            acc[2][l] = madd::<FMA>(acc[2][l], a0[l], b2[l]);
            acc[3][l] = madd::<FMA>(acc[3][l], a0[l], b3[l]);
            acc[4][l] = madd::<FMA>(acc[4][l], a1[l], b0[l]);
            acc[5][l] = madd::<FMA>(acc[5][l], a1[l], b1[l]);
            acc[6][l] = madd::<FMA>(acc[6][l], a1[l], b2[l]);
            acc[7][l] = madd::<FMA>(acc[7][l], a1[l], b3[l]);
        }
    }
    let mut out = [[0.0f32; 4]; 2];
    for r in 0..2 {
        for q in 0..4 {
            let mut s: f32 = acc[r * 4 + q].iter().sum();
            for t in full..k {
                s = madd::<FMA>(s, a[r][t], b[q][t]);
            }
            out[r][q] = s;
        }
    }
    out
}

#[inline(always)]
fn dot<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; L];
    let full = a.len() / L * L;
    for (ca, cb) in a[..full].chunks_exact(L).zip(b[..full].chunks_exact(L)) {
        for l in 0..L {
            acc[l] = madd::<FMA>(acc[l], ca[l], cb[l]);
        }
    }
    let mut s: f32 = acc.iter().sum();
    for t in full..a.len() {
        s = madd::<FMA>(s, a[t], b[t]);
    }
    s
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
        for &(n, k, m) in &[(1, 1, 1), (3, 9, 5), (2, 8, 4), (70, 37, 13), (65, 384, 33)] {
            let x: Vec<f32> = (0..n * k).map(|_| rnd()).collect();
            let w: Vec<f32> = (0..m * k).map(|_| rnd()).collect();
            let b: Vec<f32> = (0..m).map(|_| rnd()).collect();
            let y = linear(&x, &w, &b, n, k, m);
            for i in 0..n {
                for j in 0..m {
                    let want: f64 = b[j] as f64
                        + (0..k)
                            .map(|p| x[i * k + p] as f64 * w[j * k + p] as f64)
                            .sum::<f64>();
                    assert!((y[i * m + j] as f64 - want).abs() < 1e-4, "{n}x{k}x{m} at {i},{j}");
                }
            }
        }
    }
}
