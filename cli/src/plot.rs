//! The SVG figure of `crucible bench`: time against size, log-log, one line per backend.

use std::path::Path;

use plotters::prelude::*;

use crate::error::CliError;

/// One line of the figure.
pub struct Series {
    /// Legend text.
    pub label: String,
    /// (size, milliseconds), in increasing size.
    pub points: Vec<(f64, f64)>,
    /// Index of the backend (lines of one backend share a colour).
    pub colour: usize,
    /// Dashed (times including host transfers) rather than solid.
    pub dashed: bool,
}

fn size_label(x: f64) -> String {
    let log = x.log2();
    if (log - log.round()).abs() < 1e-9 && log >= 0.0 {
        format!("2^{}", log.round() as u32)
    } else {
        format!("{x:.0}")
    }
}

/// A tick label with about three significant digits and no trailing zeros.
fn ms_label(y: f64) -> String {
    let decimals = (2.0 - y.abs().log10().floor()).clamp(0.0, 9.0) as usize;
    let text = format!("{y:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// `lo..hi` widened by `factor` on both sides (and made non-empty).
fn padded(lo: f64, hi: f64, factor: f64) -> std::ops::Range<f64> {
    (lo / factor)..(hi * factor).max(lo * factor * factor)
}

/// The decades enclosing `lo..hi` (padded a little), so every line has a labelled
/// tick below and above it on a log axis.
fn decades(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let r = padded(lo, hi, 1.2);
    10f64.powf(r.start.log10().floor())..10f64.powf(r.end.log10().ceil())
}

/// Draws `series` to an SVG file at `path`.
pub fn write_svg(
    path: &Path,
    title: &str,
    x_desc: &str,
    series: &[Series],
) -> Result<(), CliError> {
    let fail = |e: &dyn std::fmt::Display| {
        CliError::file(format!("cannot draw the plot {}: {e}", path.display()))
    };
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        (x_lo, x_hi) = (x_lo.min(x), x_hi.max(x));
        (y_lo, y_hi) = (y_lo.min(y), y_hi.max(y));
    }
    if x_lo > x_hi {
        return Err(CliError::failed(
            "nothing to plot: no measurement succeeded",
        ));
    }
    let y_lo = y_lo.max(1e-6);
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            padded(x_lo, x_hi, 1.3).log_scale().base(2.0),
            decades(y_lo, y_hi).log_scale(),
        )
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("median time (ms)")
        .x_labels(16)
        .y_labels(16)
        .x_label_formatter(&|x| size_label(*x))
        .y_label_formatter(&|y| ms_label(*y))
        .draw()
        .map_err(|e| fail(&e))?;
    for s in series {
        let colour = Palette99::pick(s.colour).to_rgba();
        let style = colour.stroke_width(2);
        let points = s.points.iter().copied();
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(points, 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(points, style))
        }
        .map_err(|e| fail(&e))?;
        let dashed = s.dashed;
        drawn.label(s.label.as_str()).legend(move |(x, y)| {
            let end = if dashed { x + 10 } else { x + 24 };
            PathElement::new(vec![(x, y), (end, y)], style)
        });
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_ranges() {
        assert_eq!(size_label(1024.0), "2^10");
        assert_eq!(size_label(1000.0), "1000");
        assert_eq!(ms_label(20.0), "20");
        assert_eq!(ms_label(1234.0), "1234");
        assert_eq!(ms_label(0.0312), "0.0312");
        assert_eq!(ms_label(2.5), "2.5");
        let r = padded(8.0, 8.0, 2.0);
        assert!(r.start < 8.0 && r.end > 8.0);
        assert_eq!(decades(24.7, 409.0), 10.0..1000.0);
        assert_eq!(decades(100.0, 100.0), 10.0..1000.0);
    }

    #[test]
    fn draws_solid_and_dashed_lines_with_a_legend() {
        let path =
            std::env::temp_dir().join(format!("crucible-plot-test-{}.svg", std::process::id()));
        let line = |scale: f64| {
            (10..=16)
                .map(|k| ((1u64 << k) as f64, scale * (1u64 << k) as f64 / 1e3))
                .collect()
        };
        let series = [
            Series {
                label: "cpu:0".into(),
                points: line(1.0),
                colour: 0,
                dashed: false,
            },
            Series {
                label: "cuda:0".into(),
                points: line(0.02),
                colour: 1,
                dashed: false,
            },
            Series {
                label: "cuda:0 incl. transfers".into(),
                points: line(0.05),
                colour: 1,
                dashed: true,
            },
        ];
        let drawn = write_svg(&path, "msm-g1 test", "size (terms)", &series);
        let svg = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        assert!(drawn.is_ok());
        for text in [
            "cpu:0",
            "cuda:0 incl. transfers",
            "2^12",
            "median time (ms)",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(write_svg(&path, "empty", "size", &[]).is_err());
    }
}
