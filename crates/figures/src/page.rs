//! An offline HTML report: sections of text, tables and figures, in one file with nothing
//! loaded from elsewhere. Each panel is an inline SVG drawn by [`crate::draw`]; the page's
//! script checks on load that every panel shows its title, both axis labels, tick labels on
//! each axis (two, or as many as the data have values) and at least the marks its data has,
//! and that the page fits its window (panels wrap and shrink, wide tables scroll in their
//! own box, so a 1,400 px window never scrolls sideways); it throws (a console error) if not,
//! and records the panels checked in `data-rendered` on the body (the browser tests read it).

use std::fmt::Write;

use serde::Serialize;

use crate::draw::{self, Colours, DrawError};
use crate::{Figure, Plot};

/// A report page.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Page {
    /// The page's title and first heading.
    pub title: String,
    /// Paragraphs under the title (what was run, where).
    pub intro: Vec<String>,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

/// A section: a heading, paragraphs, then an optional table, then figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Section {
    /// The section's heading.
    pub heading: String,
    /// Paragraphs.
    pub text: Vec<String>,
    /// A table of numbers.
    pub table: Option<Table>,
    /// Figures.
    pub figures: Vec<Figure>,
}

/// A table: a header row and rows of cells already formatted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of cells, one per column.
    pub rows: Vec<Vec<String>>,
    /// Cells (row, column) the reader must not miss (a spread too wide to conclude from).
    pub flagged: Vec<(usize, usize)>,
}

/// What a cell holds when its column does not apply to its row.
fn is_blank(cell: &str) -> bool {
    cell.is_empty() || cell == "-"
}

impl Table {
    /// The table without the columns that hold nothing in any row (a dimension none of its
    /// rows has, an offset none measured): they only widen it.
    pub fn without_empty_columns(&self) -> Table {
        self.keeping(|c| self.rows.iter().any(|r| r.get(c).is_some_and(|v| !is_blank(v))))
    }

    /// The columns that hold one value in every row (of two rows or more, none flagged), as
    /// `name value`, and the table without them: said once rather than repeated in each row.
    pub fn without_constant_columns(&self) -> (Vec<String>, Table) {
        let constant = |c: usize| {
            self.rows.len() > 1
                && !self.flagged.iter().any(|&(_, f)| f == c)
                && self.rows.iter().all(|r| r.get(c).is_some() && r.get(c) == self.rows[0].get(c))
        };
        let said = (0..self.columns.len()).filter(|&c| constant(c)).map(|c| format!("{} {}", self.columns[c], self.rows[0][c])).collect();
        (said, self.keeping(|c| !constant(c)))
    }

    /// The table with only the columns `keep` holds for, its flags following their cells.
    fn keeping(&self, keep: impl Fn(usize) -> bool) -> Table {
        let kept: Vec<usize> = (0..self.columns.len()).filter(|&c| keep(c)).collect();
        let pick = |cells: &[String]| kept.iter().filter_map(|&c| cells.get(c).cloned()).collect();
        Table {
            columns: pick(&self.columns),
            rows: self.rows.iter().map(|r| pick(r)).collect(),
            flagged: self.flagged.iter().filter_map(|&(r, c)| Some((r, kept.iter().position(|&k| k == c)?))).collect(),
        }
    }
}

// Panels wrap onto as many rows as the window needs and shrink (their SVGs keep their aspect),
// the legend stays beside them, and a table wider than the window scrolls in its own box.
const STYLE: &str = "body{font-family:DejaVu Sans,sans-serif;margin:2em;max-width:1500px}h1,h2,p,figcaption{overflow-wrap:anywhere}\
.table{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td{white-space:nowrap}th{background:#f4f4f4}td.flag{background:#fde2c8;font-weight:bold}\
figure{margin:1.5em 0;border-top:1px solid #ddd;padding-top:.5em}\
figcaption{margin-bottom:.5em}.note{color:#444}.body{display:flex;align-items:flex-start;gap:8px}\
.grid{display:flex;flex-wrap:wrap;gap:4px;flex:0 1 auto;min-width:0}.panel{flex-grow:0;flex-shrink:1;max-width:100%}\
.panel svg{display:block;width:100%;height:auto}.legend svg{display:block;max-width:100%;height:auto}\
.legend{position:sticky;top:0;flex:0 0 auto;max-width:30%}";

const CHECK: &str = "<script>\n\
const failures = [];\n\
const panels = document.querySelectorAll('.panel');\n\
panels.forEach(p => {\n\
  const svg = p.querySelector('svg');\n\
  if (!svg) { failures.push(p.id + ': no plot'); return; }\n\
  const texts = Array.from(svg.querySelectorAll('text')).map(t => t.textContent.trim());\n\
  for (const want of [p.dataset.title, p.dataset.x, p.dataset.y].filter(w => w)) {\n\
    if (!texts.includes(want)) failures.push(p.id + ': no label ' + want);\n\
  }\n\
  // plotters anchors y tick labels at their end, x tick labels (and titles) at their middle.\n\
  const anchored = a => Array.from(svg.querySelectorAll('text[text-anchor=' + a + ']')).map(t => t.textContent.trim());\n\
  const yTicks = anchored('end').length;\n\
  const xTicks = anchored('middle').filter(t => t !== p.dataset.title && t !== p.dataset.x && t !== p.dataset.y).length;\n\
  if (xTicks < Number(p.dataset.xTicks) || yTicks < Number(p.dataset.yTicks)) failures.push(p.id + ': ' + xTicks + ' x and ' + yTicks + ' y tick labels');\n\
  const marks = svg.querySelectorAll(p.dataset.marks).length - (p.dataset.marks === 'rect' ? 1 : 0);\n\
  if (marks < Number(p.dataset.minMarks) || Number(p.dataset.minMarks) === 0) failures.push(p.id + ': ' + marks + ' marks');\n\
  if (svg.getBoundingClientRect().width === 0) failures.push(p.id + ': not laid out');\n\
});\n\
const root = document.documentElement;\n\
if (root.scrollWidth > root.clientWidth) {\n\
  const wide = Array.from(document.body.querySelectorAll('*')).filter(e => !e.closest('.table') && e.getBoundingClientRect().right > root.clientWidth + 0.5);\n\
  failures.push('the page is wider than its ' + root.clientWidth + ' px window (' + root.scrollWidth + ' px): ' + wide.slice(0, 5).map(e => e.id || e.getAttribute('class') || e.tagName).join(', '));\n\
}\n\
document.body.dataset.window = String(root.clientWidth);\n\
if (failures.length) throw new Error('report check failed: ' + failures.join('; '));\n\
document.body.dataset.figures = String(document.querySelectorAll('figure').length);\n\
document.body.dataset.rendered = String(panels.length);\n\
</script>";

/// Text made safe for HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Every figure of the page, in order.
pub fn figures(page: &Page) -> Vec<&Figure> {
    page.sections.iter().flat_map(|s| &s.figures).collect()
}

/// The page as one HTML document.
pub fn html(page: &Page) -> Result<String, DrawError> {
    let colours = Colours::of(&figures(page));
    let mut out = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>\n",
        t = escape(&page.title)
    );
    for p in &page.intro {
        let _ = writeln!(out, "<p>{}</p>", escape(p));
    }
    for section in &page.sections {
        let _ = writeln!(out, "<h2>{}</h2>", escape(&section.heading));
        for p in &section.text {
            let _ = writeln!(out, "<p>{}</p>", escape(p));
        }
        if let Some(table) = &section.table {
            let (in_every_row, table) = table.without_empty_columns().without_constant_columns();
            if !in_every_row.is_empty() {
                let _ = writeln!(out, "<p>In every row: {}.</p>", escape(&in_every_row.join(", ")));
            }
            out.push_str(&table_html(&table));
        }
        for figure in &section.figures {
            out.push_str(&figure_html(figure, &colours)?);
        }
    }
    out.push_str(CHECK);
    out.push_str("</body></html>\n");
    Ok(out)
}

fn table_html(table: &Table) -> String {
    let mut t = String::from("<div class=\"table\"><table><tr>");
    for c in &table.columns {
        let _ = write!(t, "<th>{}</th>", escape(c));
    }
    t.push_str("</tr>\n");
    for (r, row) in table.rows.iter().enumerate() {
        t.push_str("<tr>");
        for (c, cell) in row.iter().enumerate() {
            let class = if table.flagged.contains(&(r, c)) { " class=\"flag\"" } else { "" };
            let _ = write!(t, "<td{class}>{}</td>", escape(cell));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table></div>\n");
    t
}

/// The element a panel's check counts as its marks.
fn mark_element(plot: &Plot) -> &'static str {
    match plot {
        Plot::Lines { .. } => "circle",
        _ => "rect",
    }
}

/// The width a panel starts from in the page, pixels: a little under its drawn width, so that
/// two panels and a legend share a 1,400 px window (each shrinks further where it must).
fn panel_basis(panel: &crate::Panel) -> u32 {
    draw::panel_size(panel).0 * 9 / 10
}

fn figure_html(figure: &Figure, colours: &Colours) -> Result<String, DrawError> {
    let id = escape(&figure.id);
    let mut f = format!(
        "<figure id=\"{id}\"><figcaption><strong>{}</strong> <span class=\"note\">{}</span></figcaption><div class=\"body\">\
         <div class=\"grid\">\n",
        escape(&figure.title),
        escape(&figure.note),
    );
    for (i, panel) in figure.panels.iter().enumerate() {
        let _ = writeln!(
            f,
            "<div class=\"panel\" style=\"flex-basis:{}px\" id=\"{id}-{i}\" data-title=\"{}\" data-x=\"{}\" data-y=\"{}\" data-marks=\"{}\" data-min-marks=\"{}\" \
             data-x-ticks=\"{}\" data-y-ticks=\"{}\">{}</div>",
            panel_basis(panel),
            escape(&panel.title),
            escape(&panel.x.label),
            escape(&panel.y.label),
            mark_element(&panel.plot),
            panel.plot.marks(),
            panel.plot.least_ticks().0,
            panel.plot.least_ticks().1,
            draw::panel_svg(figure, i, colours)?
        );
    }
    let _ = writeln!(f, "</div><div class=\"legend\">{}</div></div></figure>", draw::legend_svg(figure, colours)?);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Axis, Panel, Point, Series};

    #[test]
    fn the_page_escapes_text_and_carries_each_panels_expectations() {
        let figure = Figure {
            id: "bw".into(),
            title: "Bandwidth <all>".into(),
            note: "mean ± sd".into(),
            panels: vec![Panel {
                title: "write".into(),
                x: Axis::count("processes"),
                y: Axis::linear("bandwidth (MiB/s)"),
                plot: Plot::Lines {
                    series: vec![Series {
                        name: "a&b".into(),
                        group: None,
                        dashed: false,
                        points: vec![Point { x: 1.0, y: 2.0, error: 0.1 }],
                    }],
                },
            }],
        };
        let page = Page {
            title: "run <1>".into(),
            intro: vec!["x".into()],
            sections: vec![Section {
                heading: "h".into(),
                table: Some(Table { columns: vec!["c".into()], rows: vec![vec!["<v>".into()]], flagged: Vec::new() }),
                figures: vec![figure],
                ..Section::default()
            }],
        };
        let html = html(&page).unwrap();
        assert!(html.contains("<title>run &lt;1&gt;</title>") && html.contains("<td>&lt;v&gt;</td>"));
        assert!(html.contains("Bandwidth &lt;all&gt;") && html.contains("a&amp;b"));
        assert!(html.contains("data-marks=\"circle\" data-min-marks=\"1\""));
        assert!(!html.contains("<script src"), "nothing is loaded from elsewhere");
    }

    #[test]
    fn a_table_drops_the_columns_no_row_fills_and_keeps_its_flags() {
        let table = Table {
            columns: ["sweep", "class", "bandwidth", "po_0 %"].map(String::from).to_vec(),
            rows: vec![["a", "", "10", "-"].map(String::from).to_vec(), ["b", "", "20", "3.1"].map(String::from).to_vec()],
            flagged: vec![(1, 2)],
        };
        let compact = table.without_empty_columns();
        assert_eq!(compact.columns, ["sweep", "bandwidth", "po_0 %"]);
        assert_eq!(compact.rows[1], ["b", "20", "3.1"]);
        assert_eq!(compact.flagged, [(1, 1)], "the flag follows its cell");
        let page = Page { sections: vec![Section { table: Some(table), ..Section::default() }], ..Page::default() };
        let html = html(&page).unwrap();
        assert!(!html.contains("<th>class</th>") && html.contains("<td class=\"flag\">20</td>"), "{html}");
    }

    #[test]
    fn a_value_every_row_repeats_is_said_once_above_the_table() {
        let row = |phase: &str| ["a", "posix", phase, "10"].map(String::from).to_vec();
        let table = Table {
            columns: ["sweep", "backend", "phase", "MiB/s"].map(String::from).to_vec(),
            rows: vec![row("write"), row("read")],
            flagged: vec![(0, 3)],
        };
        let (said, rest) = table.without_constant_columns();
        assert_eq!(said, ["sweep a", "backend posix"], "the flagged column stays, though constant");
        assert_eq!(rest.columns, ["phase", "MiB/s"]);
        assert_eq!(rest.flagged, [(0, 1)]);
        let one_row = Table { rows: vec![row("write")], ..table };
        assert!(one_row.without_constant_columns().0.is_empty(), "a single row repeats nothing");
        let page = Page { sections: vec![Section { table: Some(one_row), ..Section::default() }], ..Page::default() };
        assert!(!html(&page).unwrap().contains("In every row"));
    }
}
