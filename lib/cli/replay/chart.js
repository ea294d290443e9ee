'use strict'
// The replay as an SVG picture: budget left and burn rate over time, one line
// per tracker (a <path> for the budget, a <polyline> for the burn rate), status
// changes marked on the budget lines, alerts on the burn panel, and a status
// strip per tracker. Hand-written SVG: a few shapes need no charting library.

const { printable } = require('../../util/errors.js')

// Tracker colours stay clear of the status colours (green, amber, orange, red).
const COLORS = ['#1f77b4', '#9467bd', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#393b79']
const STATUS_COLORS = { healthy: '#4caf50', warning: '#ffc107', critical: '#ff7043', exhausted: '#b71c1c' }
const W = 1000
const LEFT = 70
const RIGHT = 170
const PLOT_W = W - LEFT - RIGHT
const BUDGET = { top: 80, height: 220 }
const BURN = { top: 340, height: 160 }
const STRIP_TOP = 540
const STRIP_H = 14
const TICKS = [60e3, 300e3, 900e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86_400e3, 2 * 86_400e3, 7 * 86_400e3, 30 * 86_400e3]

// Control characters first, as messages write them (a C0 character is not well-formed XML), then XML's own.
const esc = (s) => printable(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])
const f1 = (x) => (Math.round(x * 10) / 10).toString()

// A round upper bound for the burn-rate axis, at least 2: 2, 5, 10, 20, 50, …
function niceMax(x) {
  for (let p = 1; ; p *= 10) for (const m of [2, 5, 10]) if (m * p >= x) return m * p
}

/**
 * The chart as SVG text.
 * @param {object} result the replay result (summary.js)
 * @param {import('./series').Series} series its samples
 */
function chartSvg(result, series) {
  const times = series.times
  const t0 = times[0]
  const t1 = Math.max(times[times.length - 1], t0 + 1)
  const x = (t) => LEFT + ((t - t0) / (t1 - t0)) * PLOT_W
  // A loop, not Math.max(...all): trackers × samples arguments overflow the stack.
  let maxBurn = 0
  for (const line of series.lines.values()) for (const b of line.burn) if (b > maxBurn) maxBurn = b
  const burnMax = niceMax(maxBurn)
  const yBudget = (pct) => BUDGET.top + BUDGET.height * (1 - pct / 100)
  const yBurn = (b) => BURN.top + BURN.height * (1 - Math.min(b, burnMax) / burnMax)
  const names = result.trackers.map((t) => t.name)
  const color = new Map(names.map((n, i) => [n, COLORS[i % COLORS.length]]))
  const height = STRIP_TOP + names.length * (STRIP_H + 6) + 40
  const out = []
  out.push(
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${height}" fill="#fff"/>`,
    `<text x="${LEFT}" y="24" font-size="16" font-weight="bold">Error budget replay: ${esc(result.input)}</text>`,
    `<text x="${LEFT}" y="42" fill="#555">${esc(result.from)} → ${esc(result.to)} · ${result.events} solves · ${esc(result.trackers.map((t) => `${t.name} SLO ${f1(t.targetRate * 100)} %`).join(', '))}</text>`,
  )
  // Axes and grids.
  out.push(`<text x="${LEFT}" y="${BUDGET.top - 8}" fill="#333">budget left (%)</text>`)
  for (const pct of [0, 25, 50, 75, 100]) {
    out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${f1(yBudget(pct))}" y2="${f1(yBudget(pct))}" stroke="#e0e0e0"/>`)
    out.push(`<text x="${LEFT - 6}" y="${f1(yBudget(pct) + 4)}" text-anchor="end" fill="#555">${pct}</text>`)
  }
  out.push(`<text x="${LEFT}" y="${BURN.top - 8}" fill="#333">burn rate over the window (1 = budget spent exactly in one window)</text>`)
  for (const b of [0, burnMax / 2, burnMax]) {
    out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${f1(yBurn(b))}" y2="${f1(yBurn(b))}" stroke="#e0e0e0"/>`)
    out.push(`<text x="${LEFT - 6}" y="${f1(yBurn(b) + 4)}" text-anchor="end" fill="#555">${f1(b)}</text>`)
  }
  out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${f1(yBurn(1))}" y2="${f1(yBurn(1))}" stroke="#999" stroke-dasharray="4 3"/>`)
  const tick = TICKS.find((s) => (t1 - t0) / s <= 10) ?? TICKS[TICKS.length - 1]
  for (let t = Math.ceil(t0 / tick) * tick; t <= t1; t += tick) {
    const label = new Date(t)
      .toISOString()
      .slice(5, tick >= 86_400e3 ? 10 : 16)
      .replace('T', ' ')
    out.push(`<line x1="${f1(x(t))}" x2="${f1(x(t))}" y1="${BUDGET.top}" y2="${STRIP_TOP - 14}" stroke="#f0f0f0"/>`)
    out.push(`<text x="${f1(x(t))}" y="${STRIP_TOP - 2}" text-anchor="middle" fill="#555">${label}</text>`)
  }
  // One budget path and one burn polyline per tracker.
  for (const name of names) {
    const line = series.lines.get(name)
    const c = color.get(name)
    const d = times.map((t, i) => `${i === 0 ? 'M' : 'L'}${f1(x(t))},${f1(yBudget(line.budget[i]))}`).join(' ')
    out.push(`<path class="budget" data-tracker="${esc(name)}" d="${d}" fill="none" stroke="${c}" stroke-width="1.5"/>`)
    const points = times.map((t, i) => `${f1(x(t))},${f1(yBurn(line.burn[i]))}`).join(' ')
    out.push(`<polyline class="burn" data-tracker="${esc(name)}" points="${points}" fill="none" stroke="${c}" stroke-width="1.5"/>`)
  }
  // Markers: status changes on the budget lines, alerts and resolutions above the burn panel.
  for (const e of result.timeline) {
    if (e.kind === 'throttle') continue // the guard's (--throttle): in the text timeline only
    const at = Date.parse(e.at)
    if (at < t0 || at > t1) continue
    const title = `<title>${esc(`${e.at} ${e.tracker}: ${e.kind === 'status' ? `${e.from} → ${e.to}` : `${e.kind} ${e.name} (${e.severity})`}`)}</title>`
    if (e.kind === 'status') {
      out.push(
        `<circle cx="${f1(x(at))}" cy="${f1(yBudget(e.budgetRemainingPct))}" r="4" fill="${STATUS_COLORS[e.to]}" stroke="${color.get(e.tracker)}">${title}</circle>`,
      )
    } else {
      const cx = x(at)
      const y = BURN.top + 2
      const shape =
        e.kind === 'alert' ? `${f1(cx - 5)},${y} ${f1(cx + 5)},${y} ${f1(cx)},${y + 9}` : `${f1(cx - 4)},${y + 9} ${f1(cx + 4)},${y + 9} ${f1(cx)},${y + 1}`
      const fill = e.kind === 'alert' ? color.get(e.tracker) : '#fff'
      out.push(`<polygon points="${shape}" fill="${fill}" stroke="${color.get(e.tracker)}">${title}</polygon>`)
    }
  }
  // Status strips.
  names.forEach((name, i) => {
    const y = STRIP_TOP + 10 + i * (STRIP_H + 6)
    out.push(`<text x="${LEFT - 6}" y="${y + STRIP_H - 3}" text-anchor="end" fill="${color.get(name)}">${esc(name)}</text>`)
    let status = 'healthy'
    let since = t0
    const changes = result.timeline.filter((e) => e.tracker === name && e.kind === 'status')
    for (const e of [...changes, { at: null, to: null }]) {
      const at = e.at === null ? t1 : Math.min(Math.max(Date.parse(e.at), t0), t1)
      if (at > since) {
        out.push(
          `<rect x="${f1(x(since))}" y="${y}" width="${f1(Math.max(x(at) - x(since), 0.5))}" height="${STRIP_H}" fill="${STATUS_COLORS[status]}"><title>${esc(`${name}: ${status}`)}</title></rect>`,
        )
      }
      status = e.to
      since = at
    }
  })
  // Legend.
  const lx = LEFT + PLOT_W + 20
  names.forEach((name, i) => {
    out.push(
      `<line x1="${lx}" x2="${lx + 20}" y1="${BUDGET.top + 10 + i * 18}" y2="${BUDGET.top + 10 + i * 18}" stroke="${color.get(name)}" stroke-width="3"/>`,
    )
    out.push(`<text x="${lx + 26}" y="${BUDGET.top + 14 + i * 18}">${esc(name)}</text>`)
  })
  const ly = BURN.top
  Object.entries(STATUS_COLORS).forEach(([status, c], i) => {
    out.push(`<rect x="${lx}" y="${ly + i * 18}" width="12" height="12" fill="${c}"/>`, `<text x="${lx + 18}" y="${ly + 10 + i * 18}">${status}</text>`)
  })
  out.push(`<text x="${lx}" y="${ly + 90}" fill="#555">▼ alert  △ resolved</text>`)
  out.push('</svg>', '')
  return out.join('\n')
}

module.exports = { chartSvg, niceMax }
