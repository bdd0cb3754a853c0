//! The retrieval pane: where the candidates came from. The retriever's
//! latest ranking for the current task (or its re-query mid-run), each tool
//! with the parts of its score, under the name of what produced them
//! (BM25, the embedder, the heads, the re-scorer). A dense part that failed and left BM25
//! alone is said in the fault colour, never silently.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{num, pane_block, pane_title, render_block};
use crate::PaneCtx;
use crate::text::fit;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let (s, th) = (ctx.state, ctx.theme);
    let title = match &s.retrieval {
        Some(r) => format!("Retrieval · {}", r.source),
        None => "Retrieval".to_owned(),
    };
    let block = pane_block(th, ctx.focused, pane_title(&title, area.width, th)).style(th.base());
    let Some(inner) = render_block(frame, area, block) else { return };
    let w = inner.width as usize;
    let mut head: Vec<Line> = Vec::new();
    if let Some((from, reason)) = &s.retrieval_fallback {
        head.push(Line::styled(fit(&format!("{from} failed; BM25 alone: {reason}"), w).to_string(), th.fg(th.fault)));
    }
    if let Some((judge, score, needed)) = &s.judged {
        let verdict = if *needed { "a tool is needed" } else { "no tool needed: only the answer is offered" };
        let style = if *needed { th.muted() } else { th.fg(th.fault) };
        head.push(Line::styled(fit(&format!("judge {judge} {score:.2}: {verdict}"), w).to_string(), style));
    }
    let Some(r) = &s.retrieval else {
        if s.judged.as_ref().is_none_or(|j| j.2) {
            head.push(Line::styled("no ranking yet", th.muted()));
        }
        frame.render_widget(Paragraph::new(head), inner);
        return;
    };
    head.push(Line::from(vec![
        Span::styled("query ", th.muted()),
        Span::raw(fit(&r.query.replace('\n', " ⏎ "), w.saturating_sub(6)).to_string()),
    ]));
    let dense = r.hits.iter().any(|h| h.dense.is_some());
    let heads = r.hits.iter().any(|h| h.head.is_some());
    let rescored = r.hits.iter().any(|h| h.rescore.is_some());
    let mut header = vec![Cell::from("#"), Cell::from("tool"), num("score"), num("lexical")];
    let mut widths = vec![Constraint::Length(2), Constraint::Min(8), Constraint::Length(7), Constraint::Length(7)];
    if dense {
        header.push(num("dense"));
        widths.push(Constraint::Length(6));
    }
    if heads {
        header.push(num("head"));
        widths.push(Constraint::Length(6));
    }
    if rescored {
        header.push(num("rescore"));
        widths.push(Constraint::Length(7));
    }
    let rows: Vec<Row> = r
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut cells = vec![
                num((i + 1).to_string()),
                Cell::from(h.name.clone()),
                num(format!("{:.2}", h.score)),
                num(format!("{:.2}", h.lexical)),
            ];
            if dense {
                cells.push(num(h.dense.map_or("-".into(), |d| format!("{d:.2}"))));
            }
            if heads {
                cells.push(num(h.head.map_or("-".into(), |d| format!("{d:.2}"))));
            }
            if rescored {
                cells.push(num(h.rescore.map_or("-".into(), |d| format!("{d:.2}"))));
            }
            Row::new(cells)
        })
        .collect();
    let top = head.len() as u16;
    frame.render_widget(Paragraph::new(head), Rect { height: top.min(inner.height), ..inner });
    if inner.height <= top {
        return;
    }
    let body = Rect { y: inner.y + top, height: inner.height - top, ..inner };
    let table = if rows.is_empty() {
        Table::new(
            vec![Row::new(vec![Cell::from(""), Cell::from("no tool shares a word with the query")]).style(th.muted())],
            widths,
        )
    } else {
        Table::new(rows, widths)
    };
    frame.render_widget(table.header(Row::new(header).style(th.title())).column_spacing(1), body);
}
