module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  testRules: {
    // supertest's `request(server)...expect(status)` is an assertion too.
    'jest/expect-expect': [
      'warn',
      { assertFunctionNames: ['expect', 'expect*', 'request.**.expect'] },
    ],
  },
});
