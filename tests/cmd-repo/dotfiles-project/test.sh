test "$(sh hello.sh)" = "hello"
