//! The engines' matrix product against nalgebra's (matrixmultiply) at the engines' shapes,
//! column-major `m x k` times `k x n`:
//! * `matmul/{engine,nalgebra}/discrete_c50`: 50 x 50 x 163, a chunk of discrete BP at C = 50;
//! * `.../kbp_sunset_update`: 26 x 47 x 256, kernel BP's `U_p G` on the sunset at C = 100;
//! * `.../kbp_photo_eval`: 50 x 37 x 256, `A_p C` on a photograph at the defaults.
use beliefscope::inference::matmul;
use criterion::Criterion;
use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut};
use std::hint::black_box;

const SHAPES: [(&str, usize, usize, usize); 3] = [
    ("discrete_c50", 50, 50, 163),
    ("kbp_sunset_update", 26, 47, 256),
    ("kbp_photo_eval", 50, 37, 256),
];

pub fn benches(c: &mut Criterion) {
    for (name, m, k, n) in SHAPES {
        let a: Vec<f64> = (0..m * k)
            .map(|i| ((i * 7919) % 101) as f64 / 101.0)
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|i| ((i * 104_729) % 97) as f64 / 97.0)
            .collect();
        let mut out = vec![0.0; m * n];
        c.bench_function(&format!("matmul/engine/{name}"), |bench| {
            bench.iter(|| {
                matmul::product(&mut out, black_box(&a), black_box(&b), m, k, n);
                black_box(&out);
            })
        });
        let table = DMatrix::from_column_slice(m, k, &a);
        c.bench_function(&format!("matmul/nalgebra/{name}"), |bench| {
            bench.iter(|| {
                DMatrixViewMut::from_slice(&mut out, m, n).gemm(
                    1.0,
                    black_box(&table),
                    &DMatrixView::from_slice(black_box(&b), k, n),
                    0.0,
                );
                black_box(&out);
            })
        });
    }
}
