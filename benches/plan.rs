//! In-process cost of one drop-in call's own work: parsing nvcc's command line (options files included) and
//! planning it, with a config that records everything, so no program runs and no PATH is searched (the probes
//! answer from the config). Run by hand: `cargo bench --bench plan`; results and targets in docs/benchmarks.md.
//!
//! - `typical`: a CMake compile line of 41 arguments (includes, defines, `-Xcompiler`, `-gencode`).
//! - `options_files/N`: N arguments in all, nearly all of them in options files of 100 arguments each, for N up to
//!   10,000; criterion's throughput (arguments per second) shows the cost per argument, which stays flat if the
//!   work grows linearly.

use std::ffi::OsString;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nvcc_wrapper::bench::Planner;

const CONFIG: &str = r#"
nvcc = "/opt/cuda/bin/nvcc"
cuda-version = "13.0"
[host-compiler]
stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0" }
[gpu]
capabilities = ["8.6", "9.0"]
"#;

/// What CMake's CUDA language support runs for one `.cu` file of a library target.
fn typical_line() -> Vec<OsString> {
    let mut args: Vec<&str> = vec!["-forward-unknown-to-host-compiler", "-DFOO_EXPORTS", "-DNDEBUG"];
    args.extend(["-DUSE_CUDA=1", "-DFOO_VERSION=\"2.1.0\"", "-D_GNU_SOURCE", "-DWITH_THRUST", "-DFOO_HAS_MPI=0"]);
    args.extend(["-I/src/foo/third_party/fmt/include", "--use_fast_math"]);
    args.extend(["-I/src/foo/include", "-I/src/foo/src", "-I/build/foo/generated", "-I/src/foo/third_party/cub"]);
    args.extend(["-isystem", "/opt/cuda/include", "-isystem", "/usr/include/eigen3"]);
    args.extend([
        "-O3",
        "-std=c++17",
        "-Xcompiler=-fPIC",
        "-Xcompiler=-Wall,-Wextra",
        "-Xcompiler",
        "-fvisibility=hidden",
    ]);
    args.extend(["--expt-relaxed-constexpr", "--extended-lambda", "-lineinfo"]);
    args.extend(["--generate-code=arch=compute_80,code=[compute_80,sm_80]", "-gencode", "arch=compute_86,code=sm_86"]);
    args.extend(["-MD", "-MT", "CMakeFiles/foo.dir/src/kernels/reduce.cu.o"]);
    args.extend(["-MF", "CMakeFiles/foo.dir/src/kernels/reduce.cu.o.d", "-x", "cu"]);
    args.extend(["-c", "/src/foo/src/kernels/reduce.cu", "-o", "CMakeFiles/foo.dir/src/kernels/reduce.cu.o"]);
    args.into_iter().map(OsString::from).collect()
}

/// A line of `total` arguments: the typical one, the rest in options files of 100 `-I`/`-D` arguments each (written
/// to `dir`), each named with `-optf`.
fn long_line(dir: &Path, total: usize) -> Vec<OsString> {
    let mut args = typical_line();
    let mut count = args.len();
    let mut file = 0;
    while count + 2 < total {
        let in_file = (total - count - 2).min(100);
        count += in_file + 2;
        let words: Vec<String> =
            (0..in_file)
                .map(|i| {
                    if i % 2 == 0 {
                        format!("-I/src/dep{file}/include{i}")
                    } else {
                        format!("-DDEP{file}_OPTION_{i}=1")
                    }
                })
                .collect();
        let path = dir.join(format!("args{file}.txt"));
        std::fs::write(&path, words.join("\n")).unwrap();
        args.push("-optf".into());
        args.push(path.into());
        file += 1;
    }
    args
}

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("nvcc-wrapper-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let planner = Planner::new(CONFIG);

    let typical = typical_line();
    assert_eq!(typical.len(), 41);
    assert!(planner.parse_and_plan(&dir, &typical) > 0, "the plan adds -ccbin");
    let mut group = c.benchmark_group("parse_and_plan");
    group.throughput(Throughput::Elements(typical.len() as u64));
    group.bench_function("typical", |b| b.iter(|| planner.parse_and_plan(&dir, &typical)));
    group.finish();

    let mut group = c.benchmark_group("options_files");
    for total in [1_000, 2_500, 5_000, 10_000] {
        let args = long_line(&dir, total);
        assert_eq!(planner.arguments(&dir, &args), total, "the line has {total} arguments");
        group.throughput(Throughput::Elements(total as u64));
        group.bench_with_input(BenchmarkId::from_parameter(total), &args, |b, args| {
            b.iter(|| planner.parse_and_plan(&dir, args))
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(plan_benches, benches);
criterion_main!(plan_benches);
