"""The conformance gate: ``obvalidate conform`` fuzzes any implementation of the interface with the validator as its
oracle.

Layout: :mod:`.model` (registered checks, answers, findings), :mod:`.session` (the run a check works in: target,
identities, the validator's predictions, response checks), :mod:`.suites` (schema, negative, security, semantic,
stateful),
:mod:`.runner` (running suites, worker processes), :mod:`.target` (the bundled reference sandbox or a URL),
:mod:`.report` (text, JSON, JUnit, HTML, clause coverage), :mod:`.cli` (the command).
"""
