#include <cstdio>
int main() { std::puts("run_experiment: runner under construction"); return 0; }
