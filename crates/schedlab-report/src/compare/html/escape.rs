//! HTML escaping of every user-supplied string (labels, case names, hostnames, kernel command
//! lines, error texts) that reaches the page or its inline SVG.
use std::fmt;

/// Escapes text for element content and for quoted attribute values alike, so one function
/// serves every place a string is written: `&`, `<`, `>`, `"` and `'` become entities.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes when displayed, so `format!("<td>{}</td>", Esc(name))` reads like the markup it makes.
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_special_character() {
        assert_eq!(
            escape(r#"<script>alert(1)</script>&"'"#),
            "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"
        );
        assert_eq!(Esc("a<b").to_string(), "a&lt;b");
        assert_eq!(escape("plain 6.18-rc1 µs"), "plain 6.18-rc1 µs");
    }

    #[test]
    fn escaping_twice_is_visible_not_lossy() {
        // An entity in user text is shown as typed, not interpreted.
        assert_eq!(escape("&lt;"), "&amp;lt;");
    }
}
