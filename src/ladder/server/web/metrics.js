// Reading /metrics: Prometheus text into samples, and the figures the
// dashboard derives from two scrapes (rates, shares, histogram percentiles).
"use strict";

const Metrics = (() => {
  // name -> [{labels: {k: v}, value}] for every sample line.
  function parse(text) {
    const samples = new Map();
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
      if (!match) continue;
      const labels = {};
      for (const pair of (match[3] || "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[pair[1]] = pair[2];
      }
      const value = match[4] === "+Inf" ? Infinity : Number(match[4]);
      if (!samples.has(match[1])) samples.set(match[1], []);
      samples.get(match[1]).push({ labels, value });
    }
    return samples;
  }

  // The sum over every label set (one model, several finish reasons).
  function total(samples, name) {
    return (samples.get(name) || []).reduce((sum, sample) => sum + sample.value, 0);
  }

  // A histogram's cumulative buckets as [{le, count}], ascending.
  function buckets(samples, name) {
    const byBound = new Map();
    for (const { labels, value } of samples.get(name + "_bucket") || []) {
      const le = labels.le === "+Inf" ? Infinity : Number(labels.le);
      byBound.set(le, (byBound.get(le) || 0) + value);
    }
    return [...byBound.entries()].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
  }

  // The q-quantile of the observations made between two scrapes of a
  // histogram, interpolated within its bucket like Prometheus'
  // histogram_quantile; null when nothing was observed.
  function quantile(q, now, then) {
    const before = new Map((then || []).map(({ le, count }) => [le, count]));
    const counts = now.map(({ le, count }) => ({ le, count: count - (before.get(le) || 0) }));
    if (counts.length === 0) return null;
    const n = counts[counts.length - 1].count;
    if (n <= 0) return null;
    const rank = q * n;
    let lower = 0;
    let below = 0;
    for (const { le, count } of counts) {
      if (count >= rank) {
        if (le === Infinity) return lower;  // past the last bound: its lower edge
        const inBucket = count - below;
        return inBucket > 0 ? lower + (le - lower) * ((rank - below) / inBucket) : le;
      }
      lower = le;
      below = count;
    }
    return lower;
  }

  // Per second between two values of a counter taken seconds apart.
  function rate(now, then, seconds) {
    return seconds > 0 ? Math.max(0, now - then) / seconds : 0;
  }

  return { parse, total, buckets, quantile, rate };
})();
