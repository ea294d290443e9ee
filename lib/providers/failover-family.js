'use strict'
// createFailover(family, { providers }): the providers of a BudgetFamily with
// `attribution`, tried in order for one site, each solve under the budget of its
// (provider, site) child. Before a provider is asked, `family.blame()` of its child
// decides:
// - the site is blamed (it fails on every provider): stop — reject with a FaultError
//   `ESITE_FAULT` naming the site, nothing sent or recorded, so that no other
//   provider's budget burns on a site that refuses every token;
// - this provider is blamed (it fails on the other sites too): fail over — it is
//   tried only after every provider not blamed (so a task is never stuck while
//   one admits it);
// - otherwise it is asked, and what hands the task on is what does in
//   createFailover(solvers), one walk for both (lib/providers/failover-walk.js): a budget that
//   does not admit the attempt, its provider's back-off, a capacity answer; any other
//   outcome is final.
const { FaultError, describe, invalidArgType, invalidArgValue, outOfRange, checkOptionsObject } = require('../util/errors.js')
const { firstToSolve } = require('./failover-walk.js')

/**
 * @param {object} family a BudgetFamily created with `attribution`
 * @param {{ providers: Record<string, (tracker: object, labels: object) => { solve: Function }> }} options
 *   the providers in order of preference: each label value → a function making the
 *   solver (createSolver()) of a child's tracker, called once per child
 */
function createFamilyFailover(family, options) {
  const where = 'createFailover(family, options)'
  const attribution = family.attribution
  if (attribution === null) throw invalidArgValue(`${where}: family must be created with options.attribution: { provider, site }`)
  const { providers } = checkOptionsObject(options, ['providers'], `${where}: options`)
  if (providers === null || typeof providers !== 'object' || Array.isArray(providers)) {
    throw invalidArgType(`${where}: options.providers must be an object { '<provider>': (tracker, labels) => solver }, got ${describe(providers)}`)
  }
  const order = Object.keys(providers)
  if (order.length === 0) {
    throw outOfRange(`${where}: options.providers must name at least one provider, got {}`)
  }
  for (const value of order) {
    if (typeof providers[value] !== 'function') {
      throw invalidArgType(`${where}: options.providers['${value}'] must be a function (tracker, labels) => solver, got ${describe(providers[value])}`)
    }
  }
  const makers = Object.freeze({ ...providers })
  // Each child's solver, made on its first solve.
  const solvers = new WeakMap()

  function solverOf(child, labels) {
    let solver = solvers.get(child)
    if (solver === undefined) {
      solver = makers[labels[attribution.provider]](child, { ...labels })
      if (solver === null || typeof solver !== 'object' || typeof solver.solve !== 'function') {
        throw invalidArgType(`${where}: options.providers['${labels[attribution.provider]}'] must return a solver (createSolver()), got ${describe(solver)}`)
      }
      solvers.set(child, solver)
    }
    return solver
  }

  /**
   * Solves `task` for the site (and any other labels) in `options.labels` with the
   * first provider whose child is not blamed and that takes it (lib/providers/failover-walk.js).
   * Resolves with that solver's result plus `provider`; rejects with a FaultError
   * (`ESITE_FAULT`) when the site is blamed, otherwise as createFailover(solvers).
   */
  async function solve(task, solveOptions) {
    const { labels, critical } = checkOptionsObject(solveOptions, ['labels', 'critical'], 'solve options')
    if (labels === null || typeof labels !== 'object')
      throw invalidArgType(`solve options.labels must be an object of the family's labels but '${attribution.provider}', got ${describe(labels)}`)
    if (Object.hasOwn(labels, attribution.provider)) {
      throw invalidArgValue(`solve options.labels.${attribution.provider} cannot be given: the failover picks the provider`)
    }
    return firstToSolve(providersFor({ ...labels }), task, critical === undefined ? undefined : { critical })
  }

  /**
   * The providers to ask for `labels`, in turn: each one's blame is asked only when its
   * turn comes (a site blamed ends the walk with a FaultError); the blamed providers last.
   */
  function* providersFor(labels) {
    const blamed = []
    for (const value of order) {
      const childLabels = { ...labels, [attribution.provider]: value }
      const blame = family.blame(childLabels)
      if (blame !== null && blame.label === attribution.site) {
        throw new FaultError(
          `${attribution.site} '${blame.value}' is at fault: its solves fail on every provider, not on the providers' other sites; not solving (nothing sent or recorded)`,
          blame,
        )
      }
      if (blame !== null) blamed.push(childLabels)
      else yield tryOf(childLabels)
    }
    for (const childLabels of blamed) yield tryOf(childLabels)
  }

  function tryOf(childLabels) {
    const value = childLabels[attribution.provider]
    return { solver: solverOf(family.labels(childLabels), childLabels), extra: { provider: value } }
  }

  return Object.freeze({ solve, providers: Object.freeze(order) })
}

module.exports = { createFamilyFailover }
