fn main() {
    let (n, k, m) = (96usize, 384usize, 1536usize);
    let x = vec![0.5f32; n * k];
    let w = vec![0.25f32; m * k];
    let b = vec![0.0f32; m];
    let t = std::time::Instant::now();
    let reps = 50;
    for _ in 0..reps {
        std::hint::black_box(axe_embed::bench_linear(&x, &w, &b, n, k, m));
    }
    let s = t.elapsed().as_secs_f64();
    println!("{:.2} GFLOPS", (2 * n * k * m * reps) as f64 / s / 1e9);
}
