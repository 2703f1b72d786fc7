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

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 640;
const MARGIN: u32 = 15;
const Y_LABEL_AREA: u32 = 80;
/// Pixel size of the group names under the axis, and the height of one of their lines.
const GROUP_FONT: u32 = 14;
const LINE_PX: u32 = 17;
/// DejaVu Sans Mono's advance width, in em.
const CHAR_WIDTH_EM: f64 = 0.61;

/// `text` in lines of at most `width` characters, broken at spaces (a longer word is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while word.chars().count() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            lines.push(head);
        }
        if line.is_empty() {
            line = word;
        } else if line.chars().count() + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut line, word));
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
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
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
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
    // Group names are wrapped to the width of their group, so that long names (e2e: program,
    // threads, chunk) stack in lines under their bars instead of running into each other.
    let group_px = (f64::from(WIDTH) - 2.0 * f64::from(MARGIN) - f64::from(Y_LABEL_AREA)) / n;
    let per_line = ((group_px - 6.0) / (f64::from(GROUP_FONT) * CHAR_WIDTH_EM))
        .floor()
        .max(4.0) as usize;
    let wrapped: Vec<Vec<String>> = groups.iter().map(|g| wrap(g, per_line)).collect();
    let lines = wrapped.iter().map(Vec::len).max().unwrap_or(1) as u32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 22))
        .margin(MARGIN)
        .x_label_area_size(12 + lines * LINE_PX)
        .y_label_area_size(Y_LABEL_AREA)
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
    let style = TextStyle::from((FAMILY, GROUP_FONT).into_font())
        .color(&BLACK)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    for (i, g) in wrapped.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        for (k, line) in g.iter().enumerate() {
            let y = py + 6 + (k as u32 * LINE_PX) as i32;
            root.draw(&Text::new(line.clone(), (px, y), style.clone()))
                .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_and_cuts_long_words() {
        assert_eq!(
            wrap("iris_eyes_ids 1 thread chunk 32768", 14),
            ["iris_eyes_ids", "1 thread chunk", "32768"]
        );
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
        for line in wrap("iris_ids 2 threads LAN 1.5 ms chunk 32768", 10) {
            assert!(line.chars().count() <= 10, "{line}");
        }
    }

    /// The e2e chart's eight long group names, as it draws them: written to
    /// `$IRISC_PLOT_SAMPLE` when set, to look at.
    #[test]
    fn long_group_names_draw() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::var_os("IRISC_PLOT_SAMPLE")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| dir.path().join("sample.png"));
        let groups: Vec<String> = ["iris_ids", "iris_eyes_ids"]
            .iter()
            .flat_map(|p| {
                [
                    "1 thread",
                    "2 threads",
                    "1 thread chunk 32768",
                    "1 thread batch of 8",
                ]
                .iter()
                .map(move |s| format!("{p} {s}"))
            })
            .collect();
        let series = vec![
            (
                "M cmp/s (matching, wall)".to_string(),
                vec![2.1, 2.0, 1.9, 2.3, 2.1, 2.1, 2.0, 2.3],
            ),
            ("M cmp/s per party CPU-second".to_string(), vec![3.3; 8]),
        ];
        let refs = [RefLine {
            label: "target: 2 M/s".into(),
            value: 2.0,
        }];
        grouped_bars(
            &path,
            "End to end, one query against 200 records",
            "M comparisons / s",
            &groups,
            &series,
            &refs,
        )
        .unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
    }
}
