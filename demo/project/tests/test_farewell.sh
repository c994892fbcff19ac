. ./lib/greet.sh
got=$(farewell Ada)
[ "$got" = "Goodbye, Ada." ] || { echo "error: farewell Ada: expected \"Goodbye, Ada.\", got \"$got\""; exit 1; }
