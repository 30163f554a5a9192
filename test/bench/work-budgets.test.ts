import { describe, expect, it } from 'vitest';
import { workBudgets } from '../../bench/report.js';
import type { ScenarioResult } from '../../bench/scenarios.js';

const row = (scenario: string, ratio: number | null, connections = 10): ScenarioResult => ({
  scenario, connections, ratio, rps: 1, p50: 0, p99: 0, mean: 0, errors: 0, non2xx: 0, requests: 1, cpuUsPerRequest: 1, target: '', pass: null,
});

// The calibration curve (bare + N µs of work) is read by linear interpolation between its points, with bare
// itself at (0 µs, 1.0).
describe('work budgets from the calibration', () => {
  const curve = [row('bare', null), row('bare + 10 µs of work', 0.6), row('bare + 20 µs of work', 0.4), row('bare + 40 µs of work', 0.2)];

  it('gives the work each target ratio allows', () => {
    const [budget] = workBudgets(curve);
    expect(budget!.connections).toBe(10);
    expect(budget!.budgetUs).toEqual({ '0.4': 20, '0.35': 25, '0.15': null });
  });

  it('places each scenario compared with bare on the curve, or says it lies beyond it', () => {
    const [budget] = workBudgets([...curve, row('GET /chatbots/{id}', 0.8), row('GET /leads?limit=20', 0.1), row('401 storm (invalid keys)', 0.3), row('POST /leads + Idempotency-Key', 0.5)]);
    expect(budget!.equivalentUs).toEqual({ 'GET /chatbots/{id}': 5, 'GET /leads?limit=20': null, '401 storm (invalid keys)': 30 });
  });

  it('keeps concurrency levels apart', () => {
    const budgets = workBudgets([...curve, row('bare + 10 µs of work', 0.9, 1)]);
    expect(budgets.map((b) => b.connections)).toEqual([10, 1]);
    expect(budgets[1]!.budgetUs).toEqual({ '0.4': null, '0.35': null, '0.15': null });
  });
});
