//! A field drawn as a map, to a PNG: its values on a plate carrée (longitude and latitude as
//! they are, the whole globe), coloured by viridis with a colour bar beside, Natural Earth's
//! coastlines over them (`data/coastlines-110m.json`, made by `scripts/coastlines.sh`: shipped,
//! never fetched), axes in degrees.
//!
//! A field comes as points in rows of one latitude each, which is what regular and reduced,
//! Gaussian and latitude/longitude grids are. A pixel shows the value of the point nearest to
//! it in the row nearest to it: no interpolation, so a map shows what is stored, and pixels
//! beyond a limited area's edge (half a spacing out) or on a missing point stay blank.

use std::ops::{Range, RangeInclusive};
use std::sync::OnceLock;

use image::ImageEncoder;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;

use crate::draw::{fonts, DrawError, FONT};

/// Natural Earth's coastlines at 1:110m, each a line of [longitude, latitude] pairs.
const COASTLINES: &str = include_str!("../data/coastlines-110m.json");

/// The width of the colour bar's column, its labels included.
const COLOUR_BAR: u32 = 110;
/// The height of the title's band.
const TITLE: u32 = 48;
/// How far a row of one point reaches, degrees.
const SINGLE_POINT_REACH: f64 = 0.5;
/// The colour of pixels without a value (outside the grid, or missing).
const BLANK: RGBColor = RGBColor(235, 235, 235);

/// What a map shows: a field's points and values, and its names.
pub struct MapField<'a> {
    /// Each point's latitude, degrees north; points of one row follow one another.
    pub latitudes: &'a [f64],
    /// Each point's longitude, degrees east (any turn: 0-360 and -180-180 alike).
    pub longitudes: &'a [f64],
    /// Each point's value; NaN where the field has none (its bitmap says missing).
    pub values: &'a [f64],
    /// The first line over the map (the parameter's name, level, date).
    pub title: String,
    /// The second line (units, statistics).
    pub subtitle: String,
}

/// The field drawn as a `width` x `height` PNG.
pub fn map_png(field: &MapField<'_>, (width, height): (u32, u32)) -> Result<Vec<u8>, DrawError> {
    let failed = |message: String| DrawError { figure: field.title.clone(), message };
    fonts().map_err(&failed)?;
    let rows = Rows::of(field).map_err(&failed)?;
    let range = value_range(field.values).ok_or_else(|| failed("the field has no value that is not missing".into()))?;
    check_size((width, height)).map_err(&failed)?;
    let mut rgb = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw(&root, field, &rows, range).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, width, height, image::ColorType::Rgb8)
        .map_err(|e| failed(format!("cannot encode the PNG: {e}")))?;
    Ok(png)
}

/// Refuses a map size out of bounds (from 200x150 to 4000x3000 pixels).
pub fn check_size((width, height): (u32, u32)) -> Result<(), String> {
    if !(200..=4000).contains(&width) || !(150..=3000).contains(&height) {
        return Err(format!("a map of {width}x{height} pixels: from 200x150 to 4000x3000"));
    }
    Ok(())
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, field: &MapField<'_>, rows: &Rows, range: (f64, f64)) -> Drawn
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(TITLE);
    title.draw(&Text::new(field.title.clone(), (12, 6), (FONT, 18)))?;
    title.draw(&Text::new(field.subtitle.clone(), (12, 28), (FONT, 14).into_font().color(&RGBColor(80, 80, 80))))?;
    let body_width = body.dim_in_pixel().0;
    let (map_area, bar_area) = body.split_horizontally(body_width.saturating_sub(COLOUR_BAR));
    let mut chart = ChartBuilder::on(&map_area)
        .margin(8)
        .x_label_area_size(26)
        .y_label_area_size(40)
        .build_cartesian_2d(-180f64..180f64, -90f64..90f64)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(13)
        .y_labels(7)
        .x_label_formatter(&|x| format!("{x:.0}°"))
        .y_label_formatter(&|y| format!("{y:.0}°"))
        .label_style((FONT, 12))
        .draw()?;
    let colours = Palette::new(range);
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    paint(root, rows, field.values, &colours, (xs, ys))?;
    for line in coastlines()? {
        // Split where a line crosses the map's edge, so no stroke spans the map.
        for piece in line.split_at_jumps() {
            chart.draw_series(LineSeries::new(piece.iter().map(|&[lon, lat]| (f64::from(lon), f64::from(lat))), BLACK.stroke_width(1)))?;
        }
    }
    draw_colour_bar(&bar_area, &colours)
}

/// Fills the map's pixels, row by row of pixels, from the nearest row's nearest point.
fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &Rows,
    values: &[f64],
    colours: &Palette,
    (xs, ys): (Range<i32>, Range<i32>),
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let (w, h) = (f64::from(xs.end - xs.start), f64::from(ys.end - ys.start));
    let longitudes: Vec<f64> = (xs.start..xs.end).map(|x| -180.0 + (f64::from(x - xs.start) + 0.5) * 360.0 / w).collect();
    for y in ys.clone() {
        let latitude = 90.0 - (f64::from(y - ys.start) + 0.5) * 180.0 / h;
        let row = rows.nearest(latitude);
        for (x, &longitude) in (xs.start..).zip(&longitudes) {
            let colour =
                row.and_then(|r| r.nearest(longitude)).map(|i| values[i]).filter(|v| v.is_finite()).map_or(BLANK, |v| colours.of(v));
            root.draw_pixel((x, y), &colour)?;
        }
    }
    Ok(())
}

fn draw_colour_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, colours: &Palette) -> Drawn
where
    DB::ErrorType: 'static,
{
    let (low, high) = colours.range;
    let mut bar = ChartBuilder::on(area)
        .margin_top(8)
        .margin_bottom(34)
        .margin_right(8)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..1f64, low..high)?;
    bar.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|v| short_number(*v))
        .label_style((FONT, 12))
        .draw()?;
    let steps = 200;
    bar.draw_series((0..steps).map(|i| {
        let (a, b) = (low + (high - low) * f64::from(i) / f64::from(steps), low + (high - low) * f64::from(i + 1) / f64::from(steps));
        Rectangle::new([(0.0, a), (1.0, b)], colours.of((a + b) / 2.0).filled())
    }))?;
    Ok(())
}

/// A number in a few characters, for the colour bar's labels.
fn short_number(v: f64) -> String {
    let magnitude = v.abs();
    if magnitude != 0.0 && !(1e-3..1e6).contains(&magnitude) {
        format!("{v:.2e}")
    } else {
        let text = format!("{v:.4}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The smallest and largest value not missing, made a range of some width when they are one.
fn value_range(values: &[f64]) -> Option<(f64, f64)> {
    let (low, high) = values.iter().filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    if !low.is_finite() {
        return None;
    }
    let half = (low.abs() * 1e-6).max(0.5);
    Some(if low == high { (low - half, high + half) } else { (low, high) })
}

/// Viridis over a field's range, as a table of 256 colours (a pixel looks up, computes nothing).
struct Palette {
    range: (f64, f64),
    table: Vec<RGBColor>,
}

impl Palette {
    fn new(range: (f64, f64)) -> Palette {
        Palette { range, table: (0..256).map(|i| ViridisRGB::get_color(f64::from(i) / 255.0)).collect() }
    }

    fn of(&self, value: f64) -> RGBColor {
        let (low, high) = self.range;
        let place = ((value - low) / (high - low) * 255.0).round().clamp(0.0, 255.0) as usize;
        self.table[place]
    }
}

/// One row of points: its latitude, and its points sorted by longitude in [-180, 180).
struct Row {
    latitude: f64,
    /// (longitude, index of the point among the field's values).
    points: Vec<(f64, usize)>,
    /// Whether the row goes round the globe (its last point and its first are neighbours).
    global: bool,
    /// Half the spacing of its points: how far its ends reach when it is not global.
    reach: f64,
}

impl Row {
    fn of(field: &MapField<'_>, points: Range<usize>) -> Result<Row, String> {
        let latitude = field.latitudes[points.start];
        if !(-90.0..=90.0).contains(&latitude) {
            return Err(format!("point {} has latitude {latitude}: not within -90 and 90", points.start));
        }
        let mut row: Vec<(f64, usize)> = Vec::with_capacity(points.len());
        for i in points {
            let longitude = field.longitudes[i];
            if !longitude.is_finite() {
                return Err(format!("point {i} has longitude {longitude}"));
            }
            row.push(((longitude + 180.0).rem_euclid(360.0) - 180.0, i));
        }
        row.sort_by(|a, b| a.0.total_cmp(&b.0));
        if row.len() == 1 {
            return Ok(Row { latitude, points: row, global: false, reach: SINGLE_POINT_REACH });
        }
        // The gaps between neighbours round the circle (the last to the first too): the row
        // goes round the globe unless one gap is much wider than the rest, and a limited area
        // across the antimeridian is the circle less its widest gap.
        let mut gaps: Vec<f64> = row.windows(2).map(|w| w[1].0 - w[0].0).collect();
        gaps.push(row[0].0 + 360.0 - row[row.len() - 1].0);
        gaps.sort_by(f64::total_cmp);
        let spacing = gaps[gaps.len() / 2].max(1e-9);
        let global = gaps[gaps.len() - 1] <= 1.5 * spacing;
        Ok(Row { latitude, points: row, global, reach: spacing / 2.0 })
    }

    /// The point nearest `longitude` ([-180, 180)), if the row reaches it.
    fn nearest(&self, longitude: f64) -> Option<usize> {
        let points = &self.points;
        let after = points.partition_point(|(lon, _)| *lon < longitude);
        // Round the circle: a row may cross the antimeridian.
        let distance = |i: usize| {
            let d = (points[i].0 - longitude).abs();
            d.min(360.0 - d)
        };
        let candidates = [after.min(points.len() - 1), after.saturating_sub(1), 0, points.len() - 1];
        let best = candidates.into_iter().min_by(|a, b| distance(*a).total_cmp(&distance(*b)))?;
        (self.global || distance(best) <= self.reach).then_some(points[best].1)
    }
}

/// A field's rows, sorted by latitude, north first.
struct Rows {
    rows: Vec<Row>,
    /// The latitudes the rows reach, from the southern edge to the northern: half a row
    /// spacing beyond the last rows, or to the pole where that is nearer than a spacing (a
    /// global Gaussian grid has no row on the poles).
    reach: RangeInclusive<f64>,
}

impl Rows {
    fn of(field: &MapField<'_>) -> Result<Rows, String> {
        let n = field.values.len();
        if field.latitudes.len() != n || field.longitudes.len() != n || n == 0 {
            return Err(format!(
                "{n} values with {} latitudes and {} longitudes: a map needs one of each per point",
                field.latitudes.len(),
                field.longitudes.len()
            ));
        }
        let mut rows = Vec::new();
        let mut start = 0;
        for i in 1..=n {
            if i == n || field.latitudes[i] != field.latitudes[start] {
                rows.push(Row::of(field, start..i)?);
                start = i;
            }
        }
        // Rows of one or two points: a grid on a projection (rotated, Lambert, polar
        // stereographic) or in columns, whose points are not in rows of one latitude.
        if n > 4 && rows.len() * 2 > n {
            return Err(format!(
                "its {n} points are in {} rows of one latitude: a map draws grids in rows of one latitude (regular and reduced, Gaussian and latitude/longitude), not grids on a projection or in columns",
                rows.len()
            ));
        }
        rows.sort_by(|a, b| b.latitude.total_cmp(&a.latitude));
        let spacing = rows.windows(2).map(|w| w[0].latitude - w[1].latitude).fold(f64::INFINITY, f64::min);
        let half = if spacing.is_finite() { spacing / 2.0 } else { SINGLE_POINT_REACH };
        let edge = |latitude: f64, towards: f64| {
            if (towards - latitude).abs() < 2.0 * half {
                towards
            } else {
                latitude + half * towards.signum()
            }
        };
        let reach = edge(rows[rows.len() - 1].latitude, -90.0)..=edge(rows[0].latitude, 90.0);
        Ok(Rows { rows, reach })
    }

    /// The row nearest `latitude`, if the field reaches it.
    fn nearest(&self, latitude: f64) -> Option<&Row> {
        if !self.reach.contains(&latitude) {
            return None;
        }
        let after = self.rows.partition_point(|r| r.latitude > latitude);
        let near = [after.min(self.rows.len() - 1), after.saturating_sub(1)];
        near.into_iter().map(|i| &self.rows[i]).min_by(|a, b| (a.latitude - latitude).abs().total_cmp(&(b.latitude - latitude).abs()))
    }
}

/// A coastline: its points.
struct Coastline(Vec<[f32; 2]>);

impl Coastline {
    /// The line in pieces that never jump across the map (at the antimeridian).
    fn split_at_jumps(&self) -> impl Iterator<Item = &[[f32; 2]]> {
        self.0.chunk_by(|a, b| (a[0] - b[0]).abs() < 180.0)
    }
}

/// The shipped coastlines, read once.
fn coastlines() -> Result<&'static [Coastline], String> {
    static LINES: OnceLock<Result<Vec<Coastline>, String>> = OnceLock::new();
    LINES
        .get_or_init(|| {
            let lines: Vec<Vec<[f32; 2]>> =
                serde_json::from_str(COASTLINES).map_err(|e| format!("the shipped coastlines are unreadable: {e}"))?;
            Ok(lines.into_iter().map(Coastline).collect())
        })
        .as_deref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regular latitude/longitude grid of `step` degrees, north to south, 0 to 360 east.
    fn regular(step: f64) -> (Vec<f64>, Vec<f64>) {
        let (rows, columns) = ((180.0 / step) as usize + 1, (360.0 / step) as usize);
        let mut lats = Vec::new();
        let mut lons = Vec::new();
        for r in 0..rows {
            for c in 0..columns {
                lats.push(90.0 - r as f64 * step);
                lons.push(c as f64 * step);
            }
        }
        (lats, lons)
    }

    fn decoded(png: &[u8]) -> image::RgbImage {
        image::load_from_memory_with_format(png, image::ImageFormat::Png).unwrap().to_rgb8()
    }

    #[test]
    fn a_global_field_colours_every_map_pixel_and_its_extremes_take_the_palettes_ends() {
        let (lats, lons) = regular(2.0);
        // Warm at the equator, cold at the poles.
        let values: Vec<f64> = lats.iter().map(|lat| 300.0 - lat.abs()).collect();
        let field = MapField { latitudes: &lats, longitudes: &lons, values: &values, title: "t".into(), subtitle: "K".into() };
        let image = decoded(&map_png(&field, (800, 450)).unwrap());
        // The middle of the map (the equator near 0°E) is the warm end, yellow; near the
        // north pole the cold end, purple.
        let (xs, ys) = ((8 + 40 + 1)..(800 - COLOUR_BAR as i32 - 8), (TITLE as i32 + 8)..(450 - 26 - 8));
        let middle = image.get_pixel(((xs.start + xs.end) / 2 + 20) as u32, ((ys.start + ys.end) / 2 + 3) as u32);
        let top = image.get_pixel(((xs.start + xs.end) / 2 + 20) as u32, (ys.start + 2) as u32);
        assert!(middle[0] > 200 && middle[1] > 200, "equator {middle:?}");
        assert!(top[0] < 90 && top[2] > 60, "pole {top:?}");
        // No blank pixel inside the map.
        let blank = (xs.start + 2..xs.end - 2)
            .flat_map(|x| (ys.start + 2..ys.end - 2).map(move |y| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x as u32, y as u32).0 == [BLANK.0, BLANK.1, BLANK.2])
            .count();
        assert_eq!(blank, 0);
    }

    #[test]
    fn a_limited_area_leaves_the_rest_blank_and_a_missing_point_is_blank() {
        // 10°x10° around 45°N 10°E, 1° spacing.
        let (mut lats, mut lons) = (Vec::new(), Vec::new());
        for r in 0..=10 {
            for c in 0..=10 {
                lats.push(50.0 - f64::from(r));
                lons.push(5.0 + f64::from(c));
            }
        }
        let mut values = vec![1.0; lats.len()];
        values[60] = f64::NAN;
        let field = MapField { latitudes: &lats, longitudes: &lons, values: &values, title: "area".into(), subtitle: String::new() };
        let rows = Rows::of(&field).unwrap();
        assert!(rows.nearest(45.2).and_then(|r| r.nearest(10.3)).is_some());
        assert!(rows.nearest(-30.0).is_none(), "south of the area");
        assert!(rows.nearest(45.0).unwrap().nearest(100.0).is_none(), "east of the area");
        assert!(rows.nearest(45.0).unwrap().nearest(15.4).is_some(), "within half a spacing of the edge");
        let image = decoded(&map_png(&field, (800, 450)).unwrap());
        let blank = image.pixels().filter(|p| p.0 == [BLANK.0, BLANK.1, BLANK.2]).count();
        assert!(blank > 100_000, "{blank} blank pixels");
    }

    #[test]
    fn a_reduced_grid_row_goes_round_the_globe_across_the_antimeridian() {
        // Rows of 4 and 8 points: a pixel at 170°W is nearest the point at 180°.
        let lats = [10.0, 10.0, 10.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let lons = [0.0, 90.0, 180.0, 270.0, 0.0, 45.0, 90.0, 135.0, 180.0, 225.0, 270.0, 315.0];
        let values: Vec<f64> = (0..12).map(f64::from).collect();
        let field = MapField { latitudes: &lats, longitudes: &lons, values: &values, title: String::new(), subtitle: String::new() };
        let rows = Rows::of(&field).unwrap();
        let north = rows.nearest(9.0).unwrap();
        assert_eq!(north.nearest(-170.0), Some(2));
        assert_eq!(north.nearest(170.0), Some(2));
        assert_eq!(north.nearest(-100.0), Some(3));
        assert_eq!(rows.nearest(1.0).unwrap().nearest(-40.0), Some(11));
    }

    #[test]
    fn a_limited_area_across_the_antimeridian_stays_limited() {
        // 170°E to 170°W, one degree apart.
        let lons: Vec<f64> = (0..=20).map(|i| 170.0 + f64::from(i)).collect();
        let lats = vec![10.0; lons.len()];
        let values = vec![1.0; lons.len()];
        let field = MapField { latitudes: &lats, longitudes: &lons, values: &values, title: String::new(), subtitle: String::new() };
        let row = &Rows::of(&field).unwrap().rows[0];
        assert!(!row.global);
        assert_eq!(row.nearest(-175.2), Some(15));
        assert_eq!(row.nearest(179.6), Some(10));
        assert!(row.nearest(0.0).is_none() && row.nearest(160.0).is_none() && row.nearest(-160.0).is_none());
    }

    #[test]
    fn a_grid_on_a_projection_is_refused_not_smeared() {
        // Every point at its own latitude, as a rotated or Lambert grid's.
        let lats: Vec<f64> = (0..100).map(|i| 40.0 + f64::from(i) * 0.01).collect();
        let lons: Vec<f64> = (0..100).map(|i| f64::from(i % 10)).collect();
        let values = vec![1.0; 100];
        let field = MapField { latitudes: &lats, longitudes: &lons, values: &values, title: "lambert".into(), subtitle: String::new() };
        assert!(map_png(&field, (800, 450)).unwrap_err().message.contains("not grids on a projection"));
    }

    #[test]
    fn a_field_that_cannot_be_drawn_is_refused_with_the_reason() {
        let field = MapField { latitudes: &[100.0], longitudes: &[0.0], values: &[1.0], title: "bad".into(), subtitle: String::new() };
        assert!(map_png(&field, (800, 450)).unwrap_err().message.contains("latitude 100"));
        let field = MapField { latitudes: &[0.0], longitudes: &[0.0], values: &[f64::NAN], title: "empty".into(), subtitle: String::new() };
        assert!(map_png(&field, (800, 450)).unwrap_err().message.contains("no value"));
        let field = MapField { latitudes: &[0.0], longitudes: &[0.0], values: &[1.0], title: "tiny".into(), subtitle: String::new() };
        assert!(map_png(&field, (10, 10)).unwrap_err().message.contains("200x150"));
    }
}
