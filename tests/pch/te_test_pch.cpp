// The program that builds tests/pch/te_test_pch.h once for every test executable.
int main() { return 0; }
