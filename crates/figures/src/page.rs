//! An offline HTML report: sections of text, tables and figures, in one file with nothing
//! loaded from elsewhere. Each panel is an inline SVG drawn by [`crate::draw`]; the page's
//! script checks on load that every panel shows its title, both axis labels, tick labels on
//! each axis (two, or as many as the data have values) and at least the marks its data has, throws (a console error) if one does not, and records the
//! panels checked in `data-rendered` on the body (the browser tests read it).

use std::fmt::Write;

use serde::Serialize;

use crate::draw::{self, DrawError};
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
}

const STYLE: &str = "body{font-family:DejaVu Sans,sans-serif;margin:2em;max-width:1500px}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}figure{margin:1.5em 0;border-top:1px solid #ddd;padding-top:.5em}\
figcaption{margin-bottom:.5em}.note{color:#444}.body{display:flex;align-items:flex-start;gap:8px}\
.grid{display:grid;gap:4px}.legend{position:sticky;top:0}";

const CHECK: &str = "<script>\n\
const failures = [];\n\
const panels = document.querySelectorAll('.panel');\n\
panels.forEach(p => {\n\
  const svg = p.querySelector('svg');\n\
  if (!svg) { failures.push(p.id + ': no plot'); return; }\n\
  const texts = Array.from(svg.querySelectorAll('text')).map(t => t.textContent.trim());\n\
  for (const want of [p.dataset.title, p.dataset.x, p.dataset.y]) {\n\
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
if (failures.length) throw new Error('report check failed: ' + failures.join('; '));\n\
document.body.dataset.figures = String(document.querySelectorAll('figure').length);\n\
document.body.dataset.rendered = String(panels.length);\n\
</script>";

/// Text made safe for HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page as one HTML document.
pub fn html(page: &Page) -> Result<String, DrawError> {
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
            out.push_str(&table_html(table));
        }
        for figure in &section.figures {
            out.push_str(&figure_html(figure)?);
        }
    }
    out.push_str(CHECK);
    out.push_str("</body></html>\n");
    Ok(out)
}

fn table_html(table: &Table) -> String {
    let mut t = String::from("<table><tr>");
    for c in &table.columns {
        let _ = write!(t, "<th>{}</th>", escape(c));
    }
    t.push_str("</tr>\n");
    for row in &table.rows {
        t.push_str("<tr>");
        for cell in row {
            let _ = write!(t, "<td>{}</td>", escape(cell));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}

/// The element a panel's check counts as its marks.
fn mark_element(plot: &Plot) -> &'static str {
    match plot {
        Plot::Lines { .. } => "circle",
        _ => "rect",
    }
}

fn figure_html(figure: &Figure) -> Result<String, DrawError> {
    let id = escape(&figure.id);
    let mut f = format!(
        "<figure id=\"{id}\"><figcaption><strong>{}</strong> <span class=\"note\">{}</span></figcaption><div class=\"body\">\
         <div class=\"grid\" style=\"grid-template-columns:repeat({},auto)\">\n",
        escape(&figure.title),
        escape(&figure.note),
        draw::columns(figure)
    );
    for (i, panel) in figure.panels.iter().enumerate() {
        let _ = writeln!(
            f,
            "<div class=\"panel\" id=\"{id}-{i}\" data-title=\"{}\" data-x=\"{}\" data-y=\"{}\" data-marks=\"{}\" data-min-marks=\"{}\" \
             data-x-ticks=\"{}\" data-y-ticks=\"{}\">{}</div>",
            escape(&panel.title),
            escape(&panel.x.label),
            escape(&panel.y.label),
            mark_element(&panel.plot),
            panel.plot.marks(),
            panel.plot.least_ticks().0,
            panel.plot.least_ticks().1,
            draw::panel_svg(figure, i)?
        );
    }
    let _ = writeln!(f, "</div><div class=\"legend\">{}</div></div></figure>", draw::legend_svg(figure)?);
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
                table: Some(Table { columns: vec!["c".into()], rows: vec![vec!["<v>".into()]] }),
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
}
