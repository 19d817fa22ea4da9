// Command generate streams a greedy continuation of a model directory:
//
//	go run ./cmd/generate MODEL_DIR [PROMPT_IDS...]
//
// The fixture models have no tokenizer: ids and entropies are printed, and the text when there is one.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"

	"libreset.dev/reset/reset"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: generate MODEL_DIR [PROMPT_IDS...]")
	}
	prompt := []int32{1, 2, 3}
	if len(os.Args) > 2 {
		prompt = prompt[:0]
		for _, a := range os.Args[2:] {
			v, err := strconv.Atoi(a)
			if err != nil {
				log.Fatal(err)
			}
			prompt = append(prompt, int32(v))
		}
	}
	// Ctrl-C cancels the running step through the context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m, err := reset.Load(os.Args[1], reset.ModelOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(256, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := s.SetPolicy(reset.Greedy()); err != nil {
		log.Fatal(err)
	}
	if err := s.Prefill(ctx, prompt); err != nil {
		log.Fatal(err)
	}
	it := s.Generate(ctx, 32)
	for it.Next() {
		st := it.Step()
		fmt.Printf("%6d %8.4f %q\n", st.Token, st.Entropy, st.Text)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}
