//! A plain table shared by the tabular comparison styles, rendered either as aligned text or as
//! a Markdown table, so both formats show the same columns.
use std::io::Write;

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
}

impl Table {
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Table {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(cell.chars().count());
                }
            }
        }
        widths
    }

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
