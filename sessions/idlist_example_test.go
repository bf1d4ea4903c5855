package sessions_test

import (
	"fmt"

	"sweepbench/sessions"
)

func ExampleIDList() {
	fmt.Println(sessions.IDList([]int64{9}))
	fmt.Println(sessions.IDList([]int64{9, 10}))
	// Output:
	// session 9
	// sessions 9, 10
}
