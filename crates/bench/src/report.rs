//! How every bench prints its timings (one line each, for BENCHMARKS.md).

use std::time::Duration;

/// Prints `rounds=N mean_ms=… p50_ms=… p99_ms=…` (or the µs form for the policy).
pub(crate) fn report(label: &str, mut samples: Vec<Duration>, unit: &str) {
    samples.sort();
    let n = samples.len().max(1);
    let total: Duration = samples.iter().sum();
    let pick = |q: f64| {
        samples
            .get(
                ((n as f64 * q).ceil() as usize)
                    .saturating_sub(1)
                    .min(n - 1),
            )
            .copied()
            .unwrap_or_default()
    };
    let scale = |d: Duration| {
        if unit == "ms" {
            d.as_secs_f64() * 1e3
        } else {
            d.as_secs_f64() * 1e6
        }
    };
    println!(
        "{label}={} mean_{unit}={:.3} p50_{unit}={:.3} p99_{unit}={:.3}",
        samples.len(),
        scale(total) / n as f64,
        scale(pick(0.50)),
        scale(pick(0.99))
    );
}
