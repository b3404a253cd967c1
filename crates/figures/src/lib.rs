//! The figures of fieldstore's reports, and the page that holds them.
//!
//! A [`Figure`] is a titled grid of [`Panel`]s that answer one question each, with one legend
//! beside them (never over the data): a panel is one kind of plot ([`Plot`]) on two labelled
//! axes. [`draw`] renders a figure with `plotters` to SVG (a string per panel, for the HTML
//! page) or to one PNG (for papers); [`page`] assembles an offline HTML page of sections,
//! tables and figures whose script checks on load that every panel has its axes and marks.
//! [`map`] draws a field's values as a map with coastlines (the server's web catalogue).
//!
//! The crate knows nothing of benchmarks: `fieldstore-bench` turns runs into figures.

pub mod draw;
pub mod map;
pub mod page;

use serde::{Deserialize, Serialize};

/// A titled grid of panels sharing one legend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// A name unique in its page, used for its element id and its file names (`ID.png`).
    pub id: String,
    /// What the figure shows, in a sentence.
    pub title: String,
    /// How to read it: what points and error bars are, where the numbers come from.
    pub note: String,
    /// One plot per question (per phase, size, ...), drawn left to right, top to bottom.
    pub panels: Vec<Panel>,
}

/// One plot on two labelled axes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Panel {
    /// What sets this panel apart from its neighbours (`write, 1 MiB`); empty for a panel
    /// alone in its figure, which the figure's title names (no heading repeated).
    pub title: String,
    /// The horizontal axis (for bar plots, only its label is used).
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// What is drawn.
    pub plot: Plot,
}

/// An axis: its label with the unit, and how its values are spaced and printed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The quantity and its unit, e.g. `bandwidth (MiB/s)`.
    pub label: String,
    /// Linear, or base-2 logarithmic (sizes, process counts spanning decades).
    pub scale: Scale,
    /// How tick values are printed.
    pub format: Format,
}

impl Axis {
    /// A linear axis of decimal numbers.
    pub fn linear(label: &str) -> Axis {
        Axis { label: label.into(), scale: Scale::Linear, format: Format::Decimal }
    }

    /// A base-2 logarithmic axis of sizes in bytes.
    pub fn bytes(label: &str) -> Axis {
        Axis { label: label.into(), scale: Scale::Log2, format: Format::Bytes }
    }

    /// A linear axis of whole numbers (processes, nodes).
    pub fn count(label: &str) -> Axis {
        Axis { label: label.into(), scale: Scale::Linear, format: Format::Integer }
    }
}

/// How values are spaced along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scale {
    /// Equal steps for equal differences.
    Linear,
    /// Equal steps for equal ratios (ticks at the data's own values).
    Log2,
}

/// How tick values are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// Up to three significant digits.
    Decimal,
    /// Whole numbers.
    Integer,
    /// Bytes with binary prefixes (`64 KiB`, `1 MiB`).
    Bytes,
}

impl Format {
    /// `value` as a tick label.
    pub fn label(self, value: f64) -> String {
        match self {
            Format::Integer => format!("{}", value.round()),
            Format::Bytes => bytes_label(value),
            Format::Decimal => decimal_label(value),
        }
    }
}

fn bytes_label(value: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = value;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{} {}", decimal_label(v), UNITS[unit])
}

/// Three significant digits (whole numbers whole), without trailing zeros.
fn decimal_label(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 || !magnitude.is_finite() {
        return if magnitude == 0.0 { "0".into() } else { value.to_string() };
    }
    if magnitude < 1e-6 {
        return format!("{value:.1e}");
    }
    let decimals = (2 - magnitude.log10().floor() as i32).max(0) as usize;
    trim_zeros(format!("{value:.decimals$}"))
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// What a panel draws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Plot {
    /// Lines through points with error bars, x numeric.
    Lines {
        /// One line per series.
        series: Vec<Series>,
    },
    /// Bars side by side per category, with error bars.
    Bars {
        /// The categories along x.
        categories: Vec<String>,
        /// One bar per category and series.
        series: Vec<Bars>,
    },
    /// One bar per category made of stacked layers (a time breakdown).
    Stacked {
        /// The categories along x.
        categories: Vec<String>,
        /// The layers, bottom first; their own error bars are not drawn.
        layers: Vec<Bars>,
        /// Half the height of an error bar on each category's total (a standard deviation of
        /// the total); 0, or none given, draws none.
        total_errors: Vec<f64>,
    },
    /// Rows of spans along time, with shaded bands across all rows.
    Timeline {
        /// Row names, top first.
        rows: Vec<String>,
        /// What happened when.
        spans: Vec<Span>,
        /// Intervals marked across every row (offsets such as off_0).
        bands: Vec<Band>,
    },
}

impl Plot {
    /// How many data marks the panel draws: points, bars, layers or spans (the page's check
    /// expects at least these).
    pub fn marks(&self) -> usize {
        match self {
            Plot::Lines { series } => series.iter().map(|s| s.points.len()).sum(),
            Plot::Bars { series: bars, .. } | Plot::Stacked { layers: bars, .. } => {
                bars.iter().map(|b| b.values.iter().flatten().filter(|v| v.value > 0.0).count()).sum()
            }
            Plot::Timeline { spans, .. } => spans.len(),
        }
    }

    /// How many tick labels the x and y axes show at least: two, or fewer where the data have
    /// fewer distinct values (a line at one process count, a timeline of one process).
    pub fn least_ticks(&self) -> (usize, usize) {
        match self {
            Plot::Lines { series } => {
                let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.x)).collect();
                xs.sort_by(f64::total_cmp);
                xs.dedup();
                (xs.len().min(2), 2)
            }
            Plot::Bars { categories, .. } | Plot::Stacked { categories, .. } => (categories.len().min(2), 2),
            Plot::Timeline { rows, .. } => (2, rows.len().min(2)),
        }
    }

    /// The names the figure's legend shows for this panel, in order.
    fn legend_entries(&self) -> Vec<LegendEntry> {
        match self {
            Plot::Lines { series } => series
                .iter()
                .map(|s| LegendEntry {
                    name: s.name.clone(),
                    colour: s.group.clone().unwrap_or_else(|| s.name.clone()),
                    mark: LegendMark::Line { dashed: s.dashed },
                })
                .collect(),
            Plot::Bars { series: bars, .. } | Plot::Stacked { layers: bars, .. } => {
                bars.iter().map(|b| LegendEntry { name: b.name.clone(), colour: b.name.clone(), mark: LegendMark::Box }).collect()
            }
            Plot::Timeline { spans, bands, .. } => {
                let mut kinds: Vec<&str> = spans.iter().map(|s| s.kind.as_str()).collect();
                kinds.sort_unstable();
                kinds.dedup();
                let spans = kinds.into_iter().map(|k| LegendEntry { name: k.into(), colour: k.into(), mark: LegendMark::Box });
                let bands = bands.iter().enumerate().map(|(index, b)| LegendEntry {
                    name: b.label.clone(),
                    colour: b.label.clone(),
                    mark: LegendMark::Band { index },
                });
                spans.chain(bands).collect()
            }
        }
    }
}

/// A line: its points in x order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Its name in the legend; series of one name share a colour in every panel.
    pub name: String,
    /// Series of one group share a colour (a quantity and its counterpart, one solid and one
    /// dashed); `None`: its own.
    pub group: Option<String>,
    /// Drawn dashed (a second quantity of the same series, or an ideal).
    pub dashed: bool,
    /// The points.
    pub points: Vec<Point>,
}

/// A point with the half-height of its error bar (0 for none).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Position along x.
    pub x: f64,
    /// Position along y.
    pub y: f64,
    /// Half the error bar's height (a standard deviation).
    pub error: f64,
}

/// One bar per category (`None` where the series has no value).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bars {
    /// Its name in the legend.
    pub name: String,
    /// A value per category.
    pub values: Vec<Option<Value>>,
}

/// A bar's height and the half-height of its error bar.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Value {
    /// The height.
    pub value: f64,
    /// Half the error bar's height (0 for none).
    pub error: f64,
}

/// An interval of one row of a timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Index into the timeline's rows.
    pub row: usize,
    /// What it was (its colour and legend entry).
    pub kind: String,
    /// Start, in the x axis's unit.
    pub start: f64,
    /// End, in the x axis's unit.
    pub end: f64,
    /// How many events it stands for (events too short to draw merge into spans).
    pub count: usize,
}

/// A shaded interval across every row of a timeline, labelled at its top.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// Its label, e.g. `write off_0 1.2 %`.
    pub label: String,
    /// Start, in the x axis's unit.
    pub start: f64,
    /// End, in the x axis's unit.
    pub end: f64,
}

/// One entry of a figure's legend.
#[derive(Clone, Debug, PartialEq)]
struct LegendEntry {
    name: String,
    /// The name whose colour it takes.
    colour: String,
    mark: LegendMark,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LegendMark {
    Line {
        dashed: bool,
    },
    Box,
    /// A timeline's band, coloured by its place among the figure's bands.
    Band {
        index: usize,
    },
}

impl Figure {
    /// The legend: every panel's entries, each name once, in order of first appearance.
    fn legend(&self) -> Vec<LegendEntry> {
        let mut entries: Vec<LegendEntry> = Vec::new();
        for panel in &self.panels {
            for entry in panel.plot.legend_entries() {
                if !entries.iter().any(|e| e.name == entry.name) {
                    entries.push(entry);
                }
            }
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_read_as_people_write_them() {
        assert_eq!(Format::Bytes.label(1024.0), "1 KiB");
        assert_eq!(Format::Bytes.label(65536.0), "64 KiB");
        assert_eq!(Format::Bytes.label(1048576.0), "1 MiB");
        assert_eq!(Format::Bytes.label(1536.0), "1.5 KiB");
        assert_eq!(Format::Bytes.label(100.0), "100 B");
        assert_eq!(Format::Integer.label(4.0), "4");
        assert_eq!(Format::Decimal.label(1234.6), "1235");
        assert_eq!(Format::Decimal.label(12.25), "12.2");
        assert_eq!(Format::Decimal.label(2.5), "2.5");
        assert_eq!(Format::Decimal.label(0.0), "0");
        assert_eq!(Format::Decimal.label(0.001), "0.001");
        assert_eq!(Format::Decimal.label(0.015), "0.015");
        assert_eq!(Format::Decimal.label(0.0000001), "1.0e-7");
    }

    #[test]
    fn the_legend_names_each_series_once() {
        let line =
            |name: &str| Series { name: name.into(), group: None, dashed: false, points: vec![Point { x: 1.0, y: 1.0, error: 0.0 }] };
        let panel = |names: &[&str]| Panel {
            title: "p".into(),
            x: Axis::count("processes"),
            y: Axis::linear("MiB/s"),
            plot: Plot::Lines { series: names.iter().map(|n| line(n)).collect() },
        };
        let figure =
            Figure { id: "f".into(), title: "t".into(), note: String::new(), panels: vec![panel(&["a", "b"]), panel(&["b", "c"])] };
        let names: Vec<String> = figure.legend().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(figure.panels[0].plot.marks(), 2);
    }
}
