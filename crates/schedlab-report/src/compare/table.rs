//! A plain table shared by the tabular comparison styles, rendered either as aligned text or as
//! a Markdown table, so both formats show the same columns. In text a table may keep within a
//! width: its column of names, where it has one, gives way (long names shortened to keys, with
//! a legend under the table).
use std::io::Write;

use crate::wrap::{shorten, wrap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    /// The column of names (cases) that may be shortened to keep the text within a width.
    pub names: Option<usize>,
}

impl Table {
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Table {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
            names: None,
        }
    }

    /// The table with column `column` as its names, shortened where the text needs room.
    pub fn with_names(mut self, column: usize) -> Self {
        self.names = Some(column);
        self
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        widths_of(&self.header, &self.rows)
    }

    /// The aligned text within `width` columns where the names can make room: the names that
    /// do not fit become keys (`cpudl:orig cpus=64 …[3]`), listed under the table with what each
    /// stands for, wrapped. A table whose other columns alone leave less than 8 columns for the
    /// names is written as it is, as wide as it needs.
    pub fn write_text_within(&self, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
        let widths = self.widths();
        let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
        let Some(column) = self.names.filter(|_| total > width) else {
            return self.write_text(out);
        };
        let others = total - widths.get(column).copied().unwrap_or(0);
        let header = self.header.get(column).map_or(0, |h| h.chars().count());
        // At the least a key alone, `[12]`; where even that cannot make the table fit (many
        // candidates side by side), names stay whole: keys would cost them and gain nothing.
        let budget = width.saturating_sub(others).max(header);
        if budget < 8 {
            return self.write_text(out);
        }
        let names: Vec<&str> = self
            .rows
            .iter()
            .map(|r| r.get(column).map_or("", String::as_str))
            .collect();
        let shortened = shorten(&names, budget);
        let mut table = self.clone();
        for (row, name) in table.rows.iter_mut().zip(shortened.names) {
            if let Some(cell) = row.get_mut(column) {
                *cell = name;
            }
        }
        table.write_text(out)?;
        for entry in &shortened.legend {
            for line in wrap(entry, width, 4) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

fn widths_of(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    widths
}

impl Table {
    pub fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.write_text_lines(true, out)
    }

    /// The rows as aligned text without the header line (whose cells still count for widths).
    pub fn write_rows_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.write_text_lines(false, out)
    }

    fn write_text_lines(&self, header: bool, out: &mut dyn Write) -> std::io::Result<()> {
        let widths = self.widths();
        let line = |cells: &[String]| {
            let mut text = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let width = widths.get(i).copied().unwrap_or(0);
                let pad = width.saturating_sub(cell.chars().count());
                if i > 0 {
                    text.push_str("  ");
                }
                match self.align.get(i).copied().unwrap_or(Align::Left) {
                    Align::Left => {
                        text.push_str(cell);
                        text.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        text.push_str(&" ".repeat(pad));
                        text.push_str(cell);
                    }
                }
            }
            text.trim_end().to_string()
        };
        if header {
            writeln!(out, "{}", line(&self.header))?;
        }
        for row in &self.rows {
            writeln!(out, "{}", line(row))?;
        }
        Ok(())
    }

    pub fn write_markdown(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let escape = |cell: &String| cell.replace('|', "\\|");
        writeln!(
            out,
            "| {} |",
            self.header
                .iter()
                .map(escape)
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
        let rule: Vec<&str> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        writeln!(out, "| {} |", rule.join(" | "))?;
        for row in &self.rows {
            writeln!(
                out,
                "| {} |",
                row.iter().map(escape).collect::<Vec<_>>().join(" | ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_and_escapes_markdown() {
        let mut t = Table::new(&[("case", Align::Left), ("value", Align::Right)]);
        t.push(vec!["a|b".into(), "1.5".into()]);
        t.push(vec!["long-case".into(), "10".into()]);
        let mut text = Vec::new();
        t.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "case       value\na|b          1.5\nlong-case     10\n"
        );
        let mut md = Vec::new();
        t.write_markdown(&mut md).unwrap();
        assert!(String::from_utf8(md).unwrap().contains("| a\\|b | 1.5 |"));
    }
}
