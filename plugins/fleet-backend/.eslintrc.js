module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  testRules: {
    // A test without an assertion passes whatever the code does: an error, not a warning.
    // supertest's `request(server)...expect(status)` is an assertion too, and fast-check's
    // `fc.assert` (it throws with the counterexample when a property does not hold).
    'jest/expect-expect': [
      'error',
      {
        assertFunctionNames: [
          'expect',
          'expect*',
          'request.**.expect',
          'fc.assert',
        ],
      },
    ],
  },
});
