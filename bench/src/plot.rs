//! PNG charts (plotters, bitmap backend). Text uses DejaVu Sans Mono, embedded from
//! `bench/assets/` (license next to it), so charts look the same on every machine.

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSansMono.ttf");
const FAMILY: &str = "irisc-sans";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a fixed, valid file: failure here is a build defect.
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("embedded font is invalid"));
    });
}

/// A horizontal reference line (e.g. a paper's figure) drawn across a bar chart.
pub struct RefLine {
    pub label: String,
    pub value: f64,
}

/// Grouped bars: one group per entry of `groups`, one bar per series in each group.
/// `series[j].1[i]` is series j's value in group i (NaN or negative: no bar).
pub fn grouped_bars(
    path: &Path,
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<f64>)],
    refs: &[RefLine],
) -> Result<()> {
    register_font();
    let err = |e: &dyn std::fmt::Display| anyhow!("plot {}: {e}", path.display());
    let root = BitMapBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let ymax = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .chain(refs.iter().map(|r| r.value))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.15;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..n, 0f64..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(y_label)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .draw()
        .map_err(|e| err(&e))?;
    let m = series.len().max(1) as f64;
    let width = 0.8 / m;
    for (j, (name, values)) in series.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let bars = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite() && **v >= 0.0)
            .map(move |(i, &v)| {
                let x0 = i as f64 + 0.1 + j as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], color.filled())
            });
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], color.filled()));
    }
    for (k, r) in refs.iter().enumerate() {
        let color = Palette99::pick(series.len() + k + 3).to_rgba();
        chart
            .draw_series(LineSeries::new(
                [(0.0, r.value), (n, r.value)],
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(r.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 14))
        .draw()
        .map_err(|e| err(&e))?;
    // Group names under the axis, centred on their bars.
    let style = TextStyle::from((FAMILY, 15).into_font()).color(&BLACK).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ),
    );
    for (i, g) in groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(g.clone(), (px, py + 8), style.clone()))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
