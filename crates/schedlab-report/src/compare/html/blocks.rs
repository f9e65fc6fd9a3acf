//! The HTML format of blocks ([`crate::compare::block`]): what the page shows of a style's
//! document — titles as headings, tables, preformatted text as `<pre>`, notes as paragraphs and
//! lists as lists — every text escaped.
use std::fmt::{self, Write};

use super::escape::Esc;
use crate::compare::block::Block;
use crate::compare::table::{Align, Table};

pub fn write(s: &mut impl Write, blocks: &[Block]) -> fmt::Result {
    for block in blocks {
        match block {
            Block::Title(title) | Block::Caption(title) => write!(s, "<h3>{}</h3>", Esc(title))?,
            Block::Table(table) => write_table(s, table)?,
            Block::Preformatted(lines) => {
                s.write_str("<pre>")?;
                for line in lines {
                    writeln!(s, "{}", Esc(line))?;
                }
                s.write_str("</pre>")?;
            }
            Block::Notes(lines) => {
                for line in lines {
                    write!(s, r#"<p class="muted">{}</p>"#, Esc(line))?;
                }
            }
            Block::List(items) => {
                s.write_str("<ul>")?;
                for item in items {
                    write!(s, "<li>{}</li>", Esc(item))?;
                }
                s.write_str("</ul>")?;
            }
        }
    }
    Ok(())
}

fn write_table(s: &mut impl Write, table: &Table) -> fmt::Result {
    let class = |i: usize| match table.align.get(i) {
        Some(Align::Right) => r#" class="num""#,
        _ => "",
    };
    s.write_str("<table><thead><tr>")?;
    for (i, h) in table.header.iter().enumerate() {
        write!(s, "<th{}>{}</th>", class(i), Esc(h))?;
    }
    s.write_str("</tr></thead><tbody>")?;
    for row in &table.rows {
        s.write_str("<tr>")?;
        for (i, cell) in row.iter().enumerate() {
            write!(s, "<td{}>{}</td>", class(i), Esc(cell))?;
        }
        s.write_str("</tr>")?;
    }
    s.write_str("</tbody></table>")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_is_escaped_html() {
        let mut table = Table::new(&[("case", Align::Left), ("n", Align::Right)]);
        table.push(vec!["<a>".into(), "3".into()]);
        let mut s = String::new();
        write(
            &mut s,
            &[
                Block::Title("x & y".into()),
                Block::Table(table),
                Block::Preformatted(vec!["|<b>|".into()]),
                Block::Notes(vec!["¹ note".into()]),
                Block::List(vec!["a < b".into()]),
            ],
        )
        .unwrap();
        assert_eq!(
            s,
            "<h3>x &amp; y</h3><table><thead><tr><th>case</th><th class=\"num\">n</th></tr>\
             </thead><tbody><tr><td>&lt;a&gt;</td><td class=\"num\">3</td></tr></tbody></table>\
             <pre>|&lt;b&gt;|\n</pre><p class=\"muted\">¹ note</p><ul><li>a &lt; b</li></ul>"
        );
    }
}
