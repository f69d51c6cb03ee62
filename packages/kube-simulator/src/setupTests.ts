// Every test here talks HTTPS to simulated API servers and waits for their controllers: on a
// loaded machine (the test gate runs beside other work) that takes longer than Jest's default
// 5 s, which is a bound for a stuck test, not a measure of speed.
jest.setTimeout(60_000);
