//! Draws figures with `plotters`: a panel or the legend to an SVG string (the HTML page places
//! them in a grid), or a whole figure (title, panels, legend) to one PNG. Both paths run the
//! same drawing code on a `plotters` drawing area, so the page and the paper show one plot.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::{Axis, Bars, Figure, LegendEntry, LegendMark, Panel, Plot, Point, Scale, Series, Span};

/// Width and height of a panel, pixels, before it grows for many categories or rows.
const PANEL: (u32, u32) = (460, 320);
/// Height of a figure's title in a PNG.
const TITLE_HEIGHT: u32 = 40;
/// Height of one legend entry.
const LEGEND_LINE: u32 = 20;
/// The font every text is drawn in (embedded: reports look the same on every machine).
pub(crate) const FONT: &str = "sans-serif";

/// Colours told apart by people with colour-blindness (Okabe and Ito), then a few more.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(230, 159, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(153, 153, 153),
    RGBColor(117, 112, 179),
    RGBColor(166, 86, 40),
];

/// A figure could not be drawn.
#[derive(Debug)]
pub struct DrawError {
    /// The figure's id.
    pub figure: String,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for DrawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "drawing figure {}: {}", self.figure, self.message)
    }
}

impl std::error::Error for DrawError {}

type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Registers the embedded font with plotters once (text layout needs it, for SVG too).
pub(crate) fn fonts() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).map_err(|_| "the embedded font is unreadable".into())
        })
        .clone()
}

/// The colour of every name on a page (a series, an operation, a layer): one name keeps one
/// colour in every figure, so that `archive` or a variant reads the same throughout. Names get
/// palette places figure by figure; a new name takes the first place that no other name of its
/// figure holds (one no name on the page holds while there is one), so names of one figure
/// differ while it has no more names than the palette.
#[derive(Clone, Debug, Default)]
pub struct Colours(Vec<(String, usize)>);

impl Colours {
    /// The colours of the names of `figures` (a page's, in order).
    pub fn of(figures: &[&Figure]) -> Colours {
        let mut colours = Colours::default();
        for figure in figures {
            let names: Vec<String> =
                figure.legend().into_iter().filter(|e| !matches!(e.mark, LegendMark::Band { .. })).map(|e| e.colour).collect();
            for name in &names {
                if colours.place(name).is_some() {
                    continue;
                }
                // Unused on the page if the palette has one left, else unused in this figure.
                let in_figure: Vec<usize> = names.iter().filter_map(|n| colours.place(n)).collect();
                let on_page: Vec<usize> = colours.0.iter().map(|(_, p)| *p).collect();
                let free = (0..PALETTE.len())
                    .find(|p| !on_page.contains(p))
                    .or_else(|| (0..PALETTE.len()).find(|p| !in_figure.contains(p)))
                    .unwrap_or(colours.0.len() % PALETTE.len());
                colours.0.push((name.clone(), free));
            }
        }
        colours
    }

    fn place(&self, name: &str) -> Option<usize> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, p)| *p)
    }

    /// The colour of `name` (the palette's first for a name not on the page).
    pub fn get(&self, name: &str) -> RGBColor {
        PALETTE[self.place(name).unwrap_or(0)]
    }
}

/// The colour of a timeline's band `index` (its place among the figure's bands: offsets
/// carry their values in their labels, so they are told apart by place, not by name), drawn
/// translucent behind the spans. From the palette's end: spans take its start.
fn band_colour(index: usize) -> RGBColor {
    PALETTE[PALETTE.len() - 1 - index % PALETTE.len()]
}

/// Pixels a panel needs: wider for many bars, taller for many timeline rows.
pub fn panel_size(panel: &Panel) -> (u32, u32) {
    // A category's label must fit under it: about 7 pixels a character at 12 points.
    let label_width = |categories: &[String]| 16 + 7 * categories.iter().map(|c| c.chars().count()).max().unwrap_or(0) as u32;
    match &panel.plot {
        Plot::Bars { categories, series } => {
            let per_category = (20 * series.len() as u32).max(70).max(label_width(categories));
            (PANEL.0.max(100 + per_category * categories.len() as u32), PANEL.1)
        }
        Plot::Stacked { categories, .. } => (PANEL.0.max(100 + 80.max(label_width(categories)) * categories.len() as u32), PANEL.1),
        Plot::Timeline { rows, .. } => (PANEL.0 * 2, PANEL.1.max(110 + 18 * rows.len() as u32)),
        Plot::Lines { .. } => PANEL,
    }
}

/// Pixels the legend needs.
pub fn legend_size(figure: &Figure) -> (u32, u32) {
    let entries = figure.legend();
    let longest = entries.iter().map(|e| e.name.chars().count()).max().unwrap_or(0) as u32;
    (60 + 8 * longest, 20 + LEGEND_LINE * entries.len() as u32)
}

fn failed(figure: &Figure) -> impl Fn(Box<dyn std::error::Error>) -> DrawError + '_ {
    move |e| DrawError { figure: figure.id.clone(), message: e.to_string() }
}

/// Panel `index` of `figure` as an SVG document, in the page's `colours`.
pub fn panel_svg(figure: &Figure, index: usize, colours: &Colours) -> Result<String, DrawError> {
    let panel = &figure.panels[index];
    let mut svg = String::new();
    fonts().map_err(|m| DrawError { figure: figure.id.clone(), message: m })?;
    {
        let area = SVGBackend::with_string(&mut svg, panel_size(panel)).into_drawing_area();
        draw_panel(&area, panel, colours).and_then(|_| Ok(area.present()?)).map_err(failed(figure))?;
    }
    Ok(svg)
}

/// The figure's legend as an SVG document, in the page's `colours`.
pub fn legend_svg(figure: &Figure, colours: &Colours) -> Result<String, DrawError> {
    let mut svg = String::new();
    fonts().map_err(|m| DrawError { figure: figure.id.clone(), message: m })?;
    {
        let area = SVGBackend::with_string(&mut svg, legend_size(figure)).into_drawing_area();
        draw_legend(&area, &figure.legend(), colours).and_then(|_| Ok(area.present()?)).map_err(failed(figure))?;
    }
    Ok(svg)
}

/// How many panels a figure puts side by side.
pub fn columns(figure: &Figure) -> usize {
    match figure.panels.len() {
        0 | 1 => 1,
        2 | 4 => 2,
        _ => 3,
    }
}

/// The whole figure (title, panels in a grid, legend on the right) as a PNG file, in the
/// page's `colours`.
pub fn png(figure: &Figure, path: &Path, colours: &Colours) -> Result<(), DrawError> {
    fonts().map_err(|m| DrawError { figure: figure.id.clone(), message: m })?;
    let columns = columns(figure);
    let rows = figure.panels.len().div_ceil(columns).max(1);
    let cell = figure.panels.iter().map(panel_size).fold((0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    let legend = legend_size(figure);
    let size = (cell.0 * columns as u32 + legend.0, TITLE_HEIGHT + (cell.1 * rows as u32).max(legend.1));
    let root = BitMapBackend::new(path, size).into_drawing_area();
    let draw = || -> Drawn {
        root.fill(&WHITE)?;
        let (title, body) = root.split_vertically(TITLE_HEIGHT);
        title.draw(&Text::new(figure.title.clone(), (10, 10), (FONT, 18)))?;
        let (grid, legend_area) = body.split_horizontally(cell.0 * columns as u32);
        for (i, panel) in figure.panels.iter().enumerate() {
            let (x, y) = ((i % columns) as i32 * cell.0 as i32, (i / columns) as i32 * cell.1 as i32);
            let size = panel_size(panel);
            let area = grid.clone().shrink((x, y), size);
            draw_panel(&area, panel, colours)?;
        }
        draw_legend(&legend_area, &figure.legend(), colours)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(failed(figure))
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel, colours: &Colours) -> Drawn
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    match &panel.plot {
        Plot::Lines { series } => draw_lines(area, panel, series, colours),
        Plot::Bars { categories, series } => draw_bars(area, panel, categories, series, colours),
        Plot::Stacked { categories, layers, total_errors } => draw_stacked(area, panel, (categories, total_errors), layers, colours),
        Plot::Timeline { rows, spans, bands } => draw_timeline(area, panel, rows, spans, bands, colours),
    }
}

/// A linear axis with ticks at given places (the data's own values, category centres, round
/// numbers) rather than plotters' choice.
struct Ticked {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked { range, ticks }
    }

    /// Ticks at round numbers.
    fn round(range: Range<f64>) -> Ticked {
        let ticks = round_ticks(&range, 8);
        Ticked { range, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let fraction = if span > 0.0 { (value - self.range.start) / span } else { 0.0 };
        limit.0 + (fraction * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// A chart with ticks where given on both axes.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

fn chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    panel: &Panel,
    x: Ticked,
    y: Ticked,
) -> Result<Chart<'a, DB>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let y_labels = if matches!(panel.plot, Plot::Timeline { .. }) { 90 } else { 64 };
    let mut builder = ChartBuilder::on(area);
    // A panel alone in its figure has no title of its own: the figure's names it.
    if !panel.title.is_empty() {
        builder.caption(&panel.title, (FONT, 15));
    }
    Ok(builder.margin(12).x_label_area_size(42).y_label_area_size(y_labels).build_cartesian_2d(x, y)?)
}

/// Axes, tick labels and axis labels of a chart; `x_label` and `y_label` print tick values.
fn mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    panel: &Panel,
    x_label: &dyn Fn(&f64) -> String,
    y_label: &dyn Fn(&f64) -> String,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    chart
        .configure_mesh()
        .x_desc(&panel.x.label)
        .y_desc(&panel.y.label)
        .x_label_formatter(x_label)
        .y_label_formatter(y_label)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()?;
    Ok(())
}

/// Where a value sits along an axis (base-2 logarithms on a logarithmic one).
fn place(axis: &Axis, value: f64) -> f64 {
    match axis.scale {
        Scale::Linear => value,
        Scale::Log2 => value.max(f64::MIN_POSITIVE).log2(),
    }
}

/// The value at a place along an axis.
fn unplace(axis: &Axis, at: f64) -> f64 {
    match axis.scale {
        Scale::Linear => at,
        Scale::Log2 => at.exp2(),
    }
}

/// The x range of some places, padded so that end points and error bars are not on the frame.
fn padded(places: &[f64]) -> Range<f64> {
    let lo = places.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = places.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi > lo { (hi - lo) * 0.08 } else { 1.0 };
    lo - pad..hi + pad
}

/// Up to `most` round tick values (steps of 1, 2 or 5 times a power of ten) in `range`.
fn round_ticks(range: &Range<f64>, most: usize) -> Vec<f64> {
    let span = range.end - range.start;
    if span <= 0.0 || !span.is_finite() {
        return vec![range.start];
    }
    let raw = span / most.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|s| span / s <= most as f64).unwrap_or(10.0 * power);
    let first = (range.start / step).ceil() as i64;
    let last = (range.end / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// The top of a y axis from zero that holds `highest` with room above it.
fn y_top(highest: f64) -> f64 {
    if highest > 0.0 && highest.is_finite() {
        highest * 1.12
    } else {
        1.0
    }
}

fn draw_lines<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel, series: &[Series], colours: &Colours) -> Drawn
where
    DB::ErrorType: 'static,
{
    let mut places: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| place(&panel.x, p.x))).collect();
    places.sort_by(f64::total_cmp);
    places.dedup();
    let x = padded(&places);
    let ticks = if places.len() <= 12 { places.clone() } else { round_ticks(&x, 8) };
    let top = y_top(series.iter().flat_map(|s| s.points.iter().map(|p| p.y + p.error)).fold(0.0, f64::max));
    let mut chart = chart(area, panel, Ticked::new(x, ticks), Ticked::round(0.0..top))?;
    let (xf, yf) = (panel.x.format, panel.y.format);
    mesh(&mut chart, panel, &|v| xf.label(unplace(&panel.x, *v)), &|v| yf.label(*v))?;
    for s in series {
        let colour = colours.get(s.group.as_deref().unwrap_or(&s.name));
        let points: Vec<(f64, f64)> = s.points.iter().map(|p| (place(&panel.x, p.x), p.y)).collect();
        if s.dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, colour.stroke_width(2)))?;
        } else {
            chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?;
        }
        // An error bar draws its point's circle; a point without one gets a circle alone.
        let (with_error, without): (Vec<&Point>, Vec<&Point>) = s.points.iter().partition(|p| p.error > 0.0);
        chart.draw_series(with_error.iter().map(|p| {
            let x = place(&panel.x, p.x);
            ErrorBar::new_vertical(x, p.y - p.error, p.y, p.y + p.error, colour.filled(), 8)
        }))?;
        chart.draw_series(without.iter().map(|p| Circle::new((place(&panel.x, p.x), p.y), 4, colour.filled())))?;
    }
    Ok(())
}

/// Tick places at the centres of `n` categories, and a formatter naming them.
fn category_ticks(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 + 0.5).collect()
}

fn category_name(categories: &[String], at: f64) -> String {
    let i = at.floor();
    if i >= 0.0 && (i as usize) < categories.len() {
        categories[i as usize].clone()
    } else {
        String::new()
    }
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    categories: &[String],
    series: &[Bars],
    colours: &Colours,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let top = y_top(series.iter().flat_map(|s| s.values.iter().flatten().map(|v| v.value + v.error)).fold(0.0, f64::max));
    let x = Ticked::new(0.0..categories.len() as f64, category_ticks(categories.len()));
    let mut chart = chart(area, panel, x, Ticked::round(0.0..top))?;
    let yf = panel.y.format;
    mesh(&mut chart, panel, &|v| category_name(categories, *v), &|v| yf.label(*v))?;
    let width = 0.8 / series.len().max(1) as f64;
    for (k, s) in series.iter().enumerate() {
        let colour = colours.get(&s.name);
        let bars: Vec<(f64, f64, f64)> =
            s.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i as f64 + 0.1 + width * k as f64, v.value, v.error))).collect();
        chart.draw_series(bars.iter().map(|&(x, v, _)| Rectangle::new([(x, 0.0), (x + width * 0.92, v)], colour.filled())))?;
        let errors = bars.iter().filter(|b| b.2 > 0.0);
        chart.draw_series(errors.map(|&(x, v, e)| ErrorBar::new_vertical(x + width * 0.46, v - e, v, v + e, BLACK.stroke_width(1), 6)))?;
    }
    Ok(())
}

/// Categories, and the error of each one's total.
type StackedCategories<'a> = (&'a [String], &'a [f64]);

fn draw_stacked<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    (categories, errors): StackedCategories<'_>,
    layers: &[Bars],
    colours: &Colours,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let totals: Vec<f64> =
        (0..categories.len()).map(|i| layers.iter().filter_map(|l| l.values.get(i).copied().flatten()).map(|v| v.value).sum()).collect();
    let error = |i: usize| errors.get(i).copied().filter(|e| *e > 0.0 && e.is_finite());
    let top = y_top(totals.iter().enumerate().map(|(i, t)| t + error(i).unwrap_or(0.0)).fold(0.0, f64::max));
    let x = Ticked::new(0.0..categories.len() as f64, category_ticks(categories.len()));
    let mut chart = chart(area, panel, x, Ticked::round(0.0..top))?;
    let yf = panel.y.format;
    mesh(&mut chart, panel, &|v| category_name(categories, *v), &|v| yf.label(*v))?;
    let mut base = vec![0.0; categories.len()];
    for layer in layers {
        let colour = colours.get(&layer.name);
        let mut boxes = Vec::new();
        for (i, v) in layer.values.iter().enumerate().take(categories.len()) {
            if let Some(v) = v.filter(|v| v.value > 0.0) {
                boxes.push(Rectangle::new([(i as f64 + 0.2, base[i]), (i as f64 + 0.8, base[i] + v.value)], colour.filled()));
                base[i] += v.value;
            }
        }
        chart.draw_series(boxes)?;
    }
    let bars = totals.iter().enumerate().filter_map(|(i, &t)| error(i).map(|e| (i as f64 + 0.5, t, e)));
    chart.draw_series(bars.map(|(x, t, e)| ErrorBar::new_vertical(x, t - e, t, t + e, BLACK.stroke_width(1), 8)))?;
    Ok(())
}

fn draw_timeline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    rows: &[String],
    spans: &[Span],
    bands: &[crate::Band],
    colours: &Colours,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let end = spans.iter().map(|s| s.end).chain(bands.iter().map(|b| b.end)).fold(0.0, f64::max);
    let n = rows.len() as f64;
    let x = Ticked::round(0.0..if end > 0.0 { end * 1.02 } else { 1.0 });
    // Rows top first: row i spans [n - i - 1, n - i].
    let mut chart = chart(area, panel, x, Ticked::new(0.0..n.max(1.0), category_ticks(rows.len())))?;
    let xf = panel.x.format;
    let reversed: Vec<String> = rows.iter().rev().cloned().collect();
    mesh(&mut chart, panel, &|v| xf.label(*v), &|v| category_name(&reversed, *v))?;
    for (i, band) in bands.iter().enumerate() {
        let colour = band_colour(i);
        chart
            .draw_series(std::iter::once(Rectangle::new([(band.start, 0.0), (band.end.max(band.start), n)], colour.mix(0.25).filled())))?;
    }
    chart.draw_series(spans.iter().map(|s| {
        let y = n - s.row as f64 - 1.0;
        Rectangle::new([(s.start, y + 0.15), (s.end, y + 0.85)], colours.get(&s.kind).filled())
    }))?;
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[LegendEntry], colours: &Colours) -> Drawn
where
    DB::ErrorType: 'static,
{
    for (i, entry) in entries.iter().enumerate() {
        let y = 14 + (LEGEND_LINE * i as u32) as i32;
        let colour = colours.get(&entry.colour);
        match entry.mark {
            LegendMark::Line { dashed: false } => area.draw(&PathElement::new([(8, y), (38, y)], colour.stroke_width(2)))?,
            LegendMark::Line { dashed: true } => {
                area.draw(&PathElement::new([(8, y), (18, y)], colour.stroke_width(2)))?;
                area.draw(&PathElement::new([(26, y), (38, y)], colour.stroke_width(2)))?;
            }
            LegendMark::Box => area.draw(&Rectangle::new([(12, y - 6), (32, y + 6)], colour.filled()))?,
            LegendMark::Band { index } => area.draw(&Rectangle::new([(12, y - 6), (32, y + 6)], band_colour(index).mix(0.25).filled()))?,
        }
        area.draw(&Text::new(entry.name.clone(), (46, y - 7), (FONT, 13)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    fn lines() -> Figure {
        let series = |name: &str, dashed: bool| Series {
            name: name.into(),
            group: None,
            dashed,
            points: [(1.0, 10.0, 1.0), (2.0, 19.0, 2.0), (4.0, 35.0, 0.0)].iter().map(|&(x, y, error)| Point { x, y, error }).collect(),
        };
        Figure {
            id: "lines".into(),
            title: "Bandwidth".into(),
            note: String::new(),
            panels: vec![Panel {
                title: "write, 1 MiB".into(),
                x: Axis::count("processes"),
                y: Axis::linear("bandwidth (MiB/s)"),
                plot: Plot::Lines { series: vec![series("full", false), series("ideal", true)] },
            }],
        }
    }

    #[test]
    fn a_panel_has_its_title_axis_labels_ticks_and_marks() {
        let svg = panel_svg(&lines(), 0, &Colours::of(&[&lines()])).unwrap();
        for text in ["write, 1 MiB", "processes", "bandwidth (MiB/s)", ">\n1\n<", ">\n2\n<", ">\n4\n<"] {
            assert!(svg.contains(text), "{text} missing from\n{svg}");
        }
        assert_eq!(svg.matches("<circle").count(), 6, "a point per value of each line");
        let legend = legend_svg(&lines(), &Colours::of(&[&lines()])).unwrap();
        assert!(legend.contains("full") && legend.contains("ideal"));
    }

    #[test]
    fn sizes_tick_at_their_values_on_a_logarithmic_axis() {
        let mut f = lines();
        f.panels[0].x = Axis::bytes("field size");
        if let Plot::Lines { series } = &mut f.panels[0].plot {
            for s in series {
                for (p, x) in s.points.iter_mut().zip([1024.0, 65536.0, 1048576.0]) {
                    p.x = x;
                }
            }
        }
        let svg = panel_svg(&f, 0, &Colours::of(&[&f])).unwrap();
        for tick in ["1 KiB", "64 KiB", "1 MiB"] {
            assert!(svg.contains(tick), "{tick}");
        }
    }

    #[test]
    fn bars_stacks_and_timelines_draw_a_box_per_value_and_a_png() {
        let v = |value| Some(Value { value, error: 0.5 });
        let categories = vec!["A".to_string(), "B".to_string()];
        let bars =
            vec![Bars { name: "archive".into(), values: vec![v(2.0), v(3.0)] }, Bars { name: "flush".into(), values: vec![v(1.0), None] }];
        let panel = |plot| Panel { title: "p".into(), x: Axis::linear("pattern"), y: Axis::linear("seconds per process"), plot };
        let figure = Figure {
            id: "mixed".into(),
            title: "t".into(),
            note: String::new(),
            panels: vec![
                panel(Plot::Bars { categories: categories.clone(), series: bars.clone() }),
                panel(Plot::Stacked { categories, layers: bars, total_errors: vec![0.5, 0.0] }),
                panel(Plot::Timeline {
                    rows: vec!["n:0".into(), "n:1".into()],
                    spans: vec![Span { row: 0, kind: "archive".into(), start: 0.0, end: 1.0, count: 1 }],
                    bands: vec![crate::Band { label: "off_0".into(), start: 0.0, end: 0.1 }],
                }),
            ],
        };
        let colours = Colours::of(&[&figure]);
        let svg = |i| panel_svg(&figure, i, &colours).unwrap();
        let rects = |i| svg(i).matches("<rect").count();
        assert_eq!(svg(1).matches("<circle").count(), 1, "an error bar on the first total only");
        // A background, then a box per value (3), per layer value (3), per span and band (2).
        assert_eq!((rects(0), rects(1), rects(2)), (4, 4, 3));
        assert!(svg(0).contains(">\nA\n<"), "categories label the x axis");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.png");
        png(&figure, &path, &colours).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[1..4], b"PNG");
    }

    /// A figure of one panel of bars named `names`.
    fn bars_named(id: &str, names: &[&str]) -> Figure {
        let bars = names.iter().map(|n| Bars { name: n.to_string(), values: vec![Some(Value { value: 1.0, error: 0.0 })] }).collect();
        Figure {
            id: id.into(),
            title: id.into(),
            note: String::new(),
            panels: vec![Panel {
                title: String::new(),
                x: Axis::linear("phase"),
                y: Axis::linear("seconds"),
                plot: Plot::Bars { categories: vec!["write".into()], series: bars },
            }],
        }
    }

    #[test]
    fn a_name_keeps_its_colour_in_every_figure_of_a_page_and_names_of_a_figure_differ() {
        let bandwidth = bars_named("bandwidth", &["global timing", "synchronous"]);
        let breakdown = bars_named("breakdown", &["archive", "flush"]);
        let timeline = bars_named("timeline", &["retrieve", "flush", "archive"]);
        let colours = Colours::of(&[&bandwidth, &breakdown, &timeline]);
        // Drawn alone, each figure would start its palette afresh: archive first in one,
        // third in the other. On one page, archive and flush keep their colours.
        let fill = |figure: &Figure, name: &str| {
            let legend = legend_svg(figure, &colours).unwrap();
            let at = legend.find(&format!(">\n{name}\n<")).unwrap_or_else(|| panic!("{name} in {legend}"));
            let rect = legend[..at].rfind("<rect").unwrap();
            legend[rect..].split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string()
        };
        assert_eq!(fill(&breakdown, "archive"), fill(&timeline, "archive"));
        assert_eq!(fill(&breakdown, "flush"), fill(&timeline, "flush"));
        let in_timeline: Vec<String> = ["retrieve", "flush", "archive"].iter().map(|n| fill(&timeline, n)).collect();
        assert!(in_timeline[0] != in_timeline[1] && in_timeline[0] != in_timeline[2] && in_timeline[1] != in_timeline[2]);
    }

    #[test]
    fn an_untitled_panel_draws_no_caption() {
        let untitled = bars_named("alone", &["archive"]);
        let mut titled = untitled.clone();
        titled.panels[0].title = "time per operation".into();
        let texts = |f: &Figure| panel_svg(f, 0, &Colours::of(&[f])).unwrap().matches("<text").count();
        assert_eq!(texts(&titled), texts(&untitled) + 1, "the title is the one text more");
    }

    #[test]
    fn round_ticks_step_by_one_two_or_five() {
        assert_eq!(round_ticks(&(0.0..10.0), 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(round_ticks(&(0.0..1000.0), 8), [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        let small = round_ticks(&(0.0..0.36), 8);
        assert_eq!(small.len(), 8, "steps of 0.05: {small:?}");
        assert!((small[7] - 0.35).abs() < 1e-12);
    }
}
