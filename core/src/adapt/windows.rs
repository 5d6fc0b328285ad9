//! Stan's windowed warm-up schedule for metric adaptation.
//!
//! # Formula
//! Warm-up = initial fast buffer (75) | slow windows (25, 50, 100, ... doubling; the last one
//! stretched to the terminal buffer) | terminal fast buffer (50). Draws inside slow windows feed
//! the variance estimate; the metric is updated at the end of each slow window. When
//! 75 + 25 + 50 > warm-up, the buffers become 15% / 75% / 10% of warm-up; below 20 warm-up
//! iterations the metric is not adapted.
//!
//! ## References
//! Stan Reference Manual, "HMC algorithm parameters: automatic parameter tuning";
//! Stan's `windowed_adaptation.hpp`.

/// The window schedule over `num_warmup` iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSchedule {
    num_warmup: usize,
    init_buffer: usize,
    term_buffer: usize,
    base_window: usize,
    counter: usize,
    window_size: usize,
    next_window: usize,
    enabled: bool,
}

impl WindowSchedule {
    /// Stan's defaults: buffers 75 / 50 and base window 25.
    pub fn new(num_warmup: usize) -> Self {
        Self::with_buffers(num_warmup, 75, 50, 25)
    }

    /// A schedule with explicit buffers (shrunk like Stan's when they do not fit).
    pub fn with_buffers(
        num_warmup: usize,
        init_buffer: usize,
        term_buffer: usize,
        base_window: usize,
    ) -> Self {
        let (mut ib, mut tb, mut bw) = (init_buffer, term_buffer, base_window);
        let enabled = num_warmup >= 20;
        if enabled && ib + bw + tb > num_warmup {
            ib = (0.15 * num_warmup as f64) as usize;
            tb = (0.1 * num_warmup as f64) as usize;
            bw = num_warmup - (ib + tb);
        }
        WindowSchedule {
            num_warmup,
            init_buffer: ib,
            term_buffer: tb,
            base_window: bw,
            counter: 0,
            window_size: bw,
            next_window: (ib + bw).saturating_sub(1),
            enabled,
        }
    }

    /// Whether the current iteration's draw belongs to a slow window.
    pub fn in_window(&self) -> bool {
        self.enabled
            && self.counter >= self.init_buffer
            && self.counter < self.num_warmup.saturating_sub(self.term_buffer)
            && self.counter != self.num_warmup
    }

    /// Whether the current iteration ends a slow window.
    pub fn end_of_window(&self) -> bool {
        self.enabled && self.counter == self.next_window && self.counter != self.num_warmup
    }

    fn compute_next_window(&mut self) {
        let last = self.num_warmup.saturating_sub(self.term_buffer + 1);
        if self.next_window == last {
            return;
        }
        self.window_size *= 2;
        self.next_window = self.counter + self.window_size;
        if self.next_window != last {
            let boundary = self.next_window + 2 * self.window_size;
            if boundary >= self.num_warmup.saturating_sub(self.term_buffer) {
                self.next_window = last;
            }
        }
    }

    /// Advance one iteration; call after reading [`in_window`](Self::in_window) and
    /// [`end_of_window`](Self::end_of_window) for it. Returns whether a window just ended.
    pub fn advance(&mut self) -> bool {
        let ended = self.end_of_window();
        if ended {
            self.compute_next_window();
        }
        self.counter += 1;
        ended
    }

    /// Whether metric adaptation runs at all (warm-up ≥ 20).
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn ends(w: usize) -> Vec<usize> {
        let mut s = WindowSchedule::new(w);
        let mut e = Vec::new();
        for k in 0..w {
            if s.advance() {
                e.push(k);
            }
        }
        e
    }

    #[test]
    fn stan_windows_for_1000() {
        // Stan: windows end at 99, 149, 249, 449, 949 for 1000 warm-up iterations.
        assert_eq!(ends(1000), [99, 149, 249, 449, 949]);
    }

    #[test]
    fn short_warmup_shrinks_buffers() {
        // 100: buffers 15 / 10, one window of 75 ending at 89.
        assert_eq!(ends(100), [89]);
        assert!(ends(10).is_empty());
    }
}
