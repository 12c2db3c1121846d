fn main() {
    for &(n, k, m) in &[(96usize, 384usize, 1536usize), (95, 384, 384), (95, 1536, 384), (95, 32, 95), (95, 95, 32)] {
        let x = vec![0.5f32; n * k];
        let w = vec![0.25f32; m * k];
        let b = vec![0.0f32; m];
        let t = std::time::Instant::now();
        let reps = 200;
        for _ in 0..reps {
            std::hint::black_box(axe_embed::bench_linear(&x, &w, &b, n, k, m));
        }
        let s = t.elapsed().as_secs_f64();
        println!("{n}x{k}x{m}: {:.2} GFLOPS, {:.3} ms each", (2 * n * k * m * reps) as f64 / s / 1e9, s / reps as f64 * 1e3);
    }
}
