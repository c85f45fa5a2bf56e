//! PNG charts of the benches' results (plotters, bitmap backend): line charts of
//! series over time or concurrency, with optional vertical markers (a kill, a
//! recovery), and bar charts of counts. Text uses DejaVu Sans, shipped with the
//! binary, so nothing depends on the machine's fonts.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// DejaVu Sans (its licence is in `assets/DejaVuSans.LICENSE`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
const SIZE: (u32, u32) = (1000, 560);

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {reason}")]
pub struct ChartError {
    path: String,
    reason: String,
}

/// One line of a chart.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed (the baseline's runs are drawn dashed).
    pub dashed: bool,
    /// Index into the palette; series of one run share a colour.
    pub color: usize,
}

/// A line chart.
pub struct Lines {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Vertical lines at these x, with their labels.
    pub markers: Vec<(f64, String)>,
    /// A logarithmic y axis (latencies spanning orders of magnitude).
    pub log_y: bool,
}

/// A bar chart: one bar per label.
pub struct Bars {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<(String, f64)>,
    pub log_y: bool,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The shipped font is valid; a failure would only lose the text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

fn fail(path: &Path, e: impl std::fmt::Display) -> ChartError {
    ChartError {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `[lo, hi]` padded so a flat series still has room.
fn span(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

impl Lines {
    pub fn render(&self, path: &Path) -> Result<(), ChartError> {
        register_font();
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(path, e))?;
        let (x0, x1) = span(
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .chain(self.markers.iter().map(|m| m.0)),
            false,
        );
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let positive = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .filter(|y| *y > 0.0 && y.is_finite())
        };
        let lo_pos = positive().fold(f64::INFINITY, f64::min);
        let hi_pos = positive().fold(0.0, f64::max);
        // A log axis is labelled at powers of ten: within one decade, go linear.
        if self.log_y && hi_pos > 20.0 * lo_pos {
            let (lo, hi) = span(ys.filter(|y| *y > 0.0), false);
            let lo = (lo * 0.8).max(1e-3);
            let mut chart = builder(&root, &self.title)
                .build_cartesian_2d(x0..x1, (lo..hi * 1.2).log_scale())
                .map_err(|e| fail(path, e))?;
            mesh(&mut chart, &self.x_label, &self.y_label).map_err(|e| fail(path, e))?;
            self.draw(&mut chart, (lo, hi * 1.2))
                .map_err(|e| fail(path, e))?;
            legend(&mut chart).map_err(|e| fail(path, e))?;
        } else {
            let (lo, hi) = span(ys, true);
            let mut chart = builder(&root, &self.title)
                .build_cartesian_2d(x0..x1, lo..hi)
                .map_err(|e| fail(path, e))?;
            mesh(&mut chart, &self.x_label, &self.y_label).map_err(|e| fail(path, e))?;
            self.draw(&mut chart, (lo, hi)).map_err(|e| fail(path, e))?;
            legend(&mut chart).map_err(|e| fail(path, e))?;
        }
        root.present().map_err(|e| fail(path, e))
    }

    fn draw<'a, Y>(
        &self,
        chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
        (y_lo, y_hi): (f64, f64),
    ) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>>
    where
        Y: Ranged<ValueType = f64>,
    {
        for (x, label) in &self.markers {
            let style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new([(*x, y_lo), (*x, y_hi)], 6, 4, style))?
                .label(label.clone())
                .legend(move |(x, y)| {
                    // Three dashes, as the line is drawn.
                    EmptyElement::at((x, y))
                        + PathElement::new([(0, 0), (6, 0)], style)
                        + PathElement::new([(9, 0), (15, 0)], style)
                        + PathElement::new([(18, 0), (24, 0)], style)
                });
        }
        for s in &self.series {
            let style = ShapeStyle::from(&color(s.color)).stroke_width(2);
            // On a log axis zero sits on the axis floor.
            let floor = if self.log_y { y_lo } else { f64::NEG_INFINITY };
            let points = s
                .points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .map(move |(x, y)| (x, y.max(floor)));
            // The legend's key is drawn as the line is: dashed or solid.
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(points, 8, 5, style))?
                    .label(s.label.clone())
                    .legend(move |(x, y)| {
                        // Three dashes, as the line is drawn.
                        EmptyElement::at((x, y))
                            + PathElement::new([(0, 0), (6, 0)], style)
                            + PathElement::new([(9, 0), (15, 0)], style)
                            + PathElement::new([(18, 0), (24, 0)], style)
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(points, style))?
                    .label(s.label.clone())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
            }
        }
        Ok(())
    }
}

impl Bars {
    pub fn render(&self, path: &Path) -> Result<(), ChartError> {
        register_font();
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(path, e))?;
        let n = self.bars.len().max(1);
        let labels: Vec<String> = self.bars.iter().map(|b| b.0.clone()).collect();
        let x_fmt = move |x: &f64| {
            let i = x.floor();
            if (x - i - 0.5).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let (_, hi) = span(self.bars.iter().map(|b| b.1), true);
        if self.log_y {
            let lo = self
                .bars
                .iter()
                .map(|b| b.1)
                .filter(|v| *v > 0.0)
                .fold(f64::INFINITY, f64::min)
                .min(1.0)
                * 0.5;
            let mut chart = builder(&root, &self.title)
                .build_cartesian_2d(0.0..n as f64, (lo..hi * 3.0).log_scale())
                .map_err(|e| fail(path, e))?;
            draw_bars(&mut chart, &self.bars, lo, &x_fmt, &self.y_label)
                .map_err(|e| fail(path, e))?;
        } else {
            let mut chart = builder(&root, &self.title)
                .build_cartesian_2d(0.0..n as f64, 0.0..hi * 1.1)
                .map_err(|e| fail(path, e))?;
            draw_bars(&mut chart, &self.bars, 0.0, &x_fmt, &self.y_label)
                .map_err(|e| fail(path, e))?;
        }
        root.present().map_err(|e| fail(path, e))
    }
}

fn draw_bars<'a, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    bars: &[(String, f64)],
    base: f64,
    x_fmt: &dyn Fn(&f64) -> String,
    y_label: &str,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * bars.len() + 1)
        .x_label_formatter(x_fmt)
        .y_label_formatter(&tick)
        .y_desc(y_label)
        .label_style((FAMILY, 15))
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
        let x = i as f64;
        Rectangle::new(
            [(x + 0.15, base), (x + 0.85, v.max(base))],
            color(i).filled(),
        )
    }))?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
        Text::new(
            value_text(*v),
            (i as f64 + 0.3, v.max(base)),
            (FAMILY, 15).into_font(),
        )
    }))?;
    Ok(())
}

/// An axis tick: whole numbers without a decimal point, others with as few
/// decimals as they need (at most three).
fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        return format!("{:.0}", v.round());
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn value_text(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn builder<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, BitMapBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, (FAMILY, 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(72);
    b
}

fn mesh<'a, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    x_label: &str,
    y_label: &str,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style((FAMILY, 15))
        .light_line_style(WHITE.mix(0.0))
        .draw()
}

fn legend<'a, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>>
where
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font((FAMILY, 14))
        .draw()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ticks_show_whole_numbers_without_a_decimal_point() {
        assert_eq!(super::tick(&5.0), "5");
        assert_eq!(super::tick(&1500.0), "1500");
        assert_eq!(super::tick(&0.25), "0.25");
        assert_eq!(super::tick(&2.5), "2.5");
        assert_eq!(super::tick(&-3.0), "-3");
    }

    use super::*;

    #[test]
    fn draws_line_and_bar_charts_as_png() {
        let dir = tempfile::tempdir().unwrap();
        let lines = Lines {
            title: "depth".into(),
            x_label: "s".into(),
            y_label: "tickets".into(),
            series: vec![
                Series {
                    label: "ours".into(),
                    points: vec![(0.0, 10.0), (1.0, 5.0), (2.0, 0.0)],
                    dashed: false,
                    color: 0,
                },
                Series {
                    label: "seed 000".into(),
                    points: vec![(0.0, 10.0), (2.0, 8.0)],
                    dashed: true,
                    color: 1,
                },
            ],
            markers: vec![(0.5, "kill".into())],
            log_y: false,
        };
        let bars = Bars {
            title: "answers".into(),
            y_label: "count".into(),
            bars: vec![("won".into(), 3.0), ("refused".into(), 1e5)],
            log_y: true,
        };
        for (name, log) in [("a.png", false), ("b.png", true)] {
            let p = dir.path().join(name);
            Lines {
                log_y: log,
                series: lines
                    .series
                    .iter()
                    .map(|s| Series {
                        label: s.label.clone(),
                        points: s.points.iter().map(|&(x, y)| (x, y + 1.0)).collect(),
                        dashed: s.dashed,
                        color: s.color,
                    })
                    .collect(),
                markers: lines.markers.clone(),
                title: lines.title.clone(),
                x_label: lines.x_label.clone(),
                y_label: lines.y_label.clone(),
            }
            .render(&p)
            .unwrap();
            assert_eq!(&std::fs::read(&p).unwrap()[1..4], b"PNG");
        }
        let p = dir.path().join("c.png");
        bars.render(&p).unwrap();
        assert_eq!(&std::fs::read(&p).unwrap()[1..4], b"PNG");
    }
}
