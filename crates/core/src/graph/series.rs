//! The history of a score or a weight: one point per iteration in which it
//! changed, capped so that `start`'s row (an edge per tool, all rewritten
//! by every update) does not grow without end.

/// The most points a score or weight series keeps. `start` has an edge per
/// tool and an update rewrites its whole row, so at 16,000 tools an uncapped
/// history grew by hundreds of KB a task for the whole session.
pub const HISTORY_CAP: usize = 64;

/// A series of (iteration, value) points in iteration order, with at most
/// one point per iteration and at most [`HISTORY_CAP`] points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Series {
    points: Vec<(u32, f64)>,
    /// The newest point's iteration, kept beside the points so that adding
    /// one need not read them: at 16,000 tools an update adds a point to
    /// each of `start`'s thousands of series, each in a heap block of its
    /// own, and reading the newest point cost a cache miss apiece (two
    /// fifths of the update).
    last_at: Option<u32>,
}

impl Series {
    /// A series from points already checked to be in strictly increasing
    /// iteration order.
    pub(super) fn from_points(points: Vec<(u32, f64)>) -> Self {
        let last_at = points.last().map(|p| p.0);
        Series { points, last_at }
    }

    pub(super) fn points(&self) -> &[(u32, f64)] {
        &self.points
    }

    /// Records `value` as the point of `iteration`, replacing an earlier
    /// point of the same iteration so the series has one point per
    /// iteration. A series at `HISTORY_CAP` drops every second point but the
    /// first and the newest: it keeps spanning the whole session, at half
    /// the resolution, and thinning stays amortised O(1) a point
    /// (deterministic, so a graph rebuilt from its journal thins the same).
    pub(super) fn push(&mut self, iteration: u32, value: f64) {
        if self.last_at == Some(iteration) {
            if let Some(last) = self.points.last_mut() {
                last.1 = value;
            }
            return;
        }
        if self.points.len() == self.points.capacity() {
            // Never beyond the one point over the cap that triggers thinning:
            // doubling would reach 128 points (2 KB) a series, and `start`'s
            // thousands of series would span twice the memory and pages.
            let wanted = (self.points.capacity() * 2).clamp(4, HISTORY_CAP + 1);
            self.points.reserve_exact(wanted - self.points.len());
        }
        self.points.push((iteration, value));
        self.last_at = Some(iteration);
        if self.points.len() > HISTORY_CAP {
            let last = self.points.len() - 1;
            let mut i = 0;
            self.points.retain(|_| {
                let keep = i == 0 || i == last || i % 2 == 0;
                i += 1;
                keep
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_stays_within_its_cap_and_spans_the_session() {
        let mut series = Series::default();
        for it in 1..=10_000u32 {
            series.push(it, f64::from(it));
            assert!(series.points().len() <= HISTORY_CAP, "{} points at iteration {it}", series.points().len());
        }
        assert_eq!(series.points().first(), Some(&(1, 1.0)));
        assert_eq!(series.points().last(), Some(&(10_000, 10_000.0)));
        assert!(series.points().windows(2).all(|w| w[0].0 < w[1].0), "in order");
        assert!(series.points().len() >= HISTORY_CAP / 2);
    }

    #[test]
    fn below_the_cap_every_point_is_kept() {
        let mut series = Series::default();
        for it in 1..=HISTORY_CAP as u32 {
            series.push(it, 0.5);
            series.push(it, 0.25);
        }
        assert_eq!(series.points().len(), HISTORY_CAP);
        assert!(series.points().iter().all(|p| p.1 == 0.25));
    }

    #[test]
    fn a_loaded_series_replaces_its_newest_point_within_that_iteration() {
        let mut series = Series::from_points(vec![(1, 0.1), (4, 0.4)]);
        series.push(4, 0.5);
        series.push(5, 0.6);
        assert_eq!(series.points(), &[(1, 0.1), (4, 0.5), (5, 0.6)]);
    }
}
