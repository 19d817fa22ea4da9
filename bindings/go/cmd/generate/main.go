// Command generate streams a greedy continuation of a model directory:
//
//	go run ./cmd/generate [-max-tokens N] [-stop TEXT]... [-stop-id ID]... MODEL_DIR [PROMPT_IDS...]
//
// The options are the library's stop conditions (Session.SetStop), none by default:
//
//	-max-tokens N  end the sequence after N generated tokens (end: length); 0 = no limit
//	-stop TEXT     end it once its text contains TEXT (repeatable; the model needs a tokenizer)
//	-stop-id ID    end it when it draws token ID (repeatable)
//
// The fixture models have no tokenizer: ids and entropies are printed, and the text when there is one.
// The sample stops by itself after 32 steps (or -max-tokens steps, when that is more).  A last line
// says how the sequence ended: "end: length", "end: stop (string I)" (I: the index of the -stop that
// matched), "end: stop (id ID)", "end: end of generation", or "end: limit" when the sample's own step
// cap came first.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"

	"libreset.dev/reset/reset"
)

// defaultSteps is the sample's own step cap when -max-tokens asks for no more.
const defaultSteps = 32

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return fmt.Sprint([]string(*l)) }

func (l *stringList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("a stop string cannot be empty")
	}
	*l = append(*l, v)
	return nil
}

// idList is a repeatable token id flag.
type idList []int32

func (l *idList) String() string { return fmt.Sprint([]int32(*l)) }

func (l *idList) Set(v string) error {
	id, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return fmt.Errorf("not a token id: %q", v)
	}
	if id < 0 {
		return fmt.Errorf("a token id cannot be negative: %d", id)
	}
	*l = append(*l, int32(id))
	return nil
}

// endLine names how the last step ended its sequence, or the sample's cap when it did not.
func endLine(last reset.Step, stepped bool) string {
	if !stepped || !last.End {
		return "end: limit"
	}
	switch last.EndReason {
	case reset.EndLength:
		return "end: length"
	case reset.EndStop:
		if last.StopIndex >= 0 {
			return fmt.Sprintf("end: stop (string %d)", last.StopIndex)
		}
		return fmt.Sprintf("end: stop (id %d)", last.Token)
	case reset.EndEOS:
		return "end: end of generation"
	}
	return "end: " + last.EndReason.String()
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("generate: ")
	var stops stringList
	var stopIDs idList
	maxTokens := flag.Int("max-tokens", 0, "end the sequence after `N` generated tokens (0: no limit)")
	flag.Var(&stops, "stop", "end the sequence once its text contains `TEXT` (repeatable)")
	flag.Var(&stopIDs, "stop-id", "end the sequence when it draws token `ID` (repeatable)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(),
			"usage: generate [-max-tokens N] [-stop TEXT]... [-stop-id ID]... MODEL_DIR [PROMPT_IDS...]\n")
		flag.PrintDefaults()
	}
	flag.Parse() // an unparsable value: a message, the usage and exit status 2
	if *maxTokens < 0 {
		fmt.Fprintf(os.Stderr, "generate: -max-tokens must be 0 or more, not %d\n", *maxTokens)
		os.Exit(2)
	}
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	prompt := []int32{1, 2, 3}
	if flag.NArg() > 1 {
		prompt = prompt[:0]
		for _, a := range flag.Args()[1:] {
			v, err := strconv.ParseInt(a, 10, 32)
			if err != nil || v < 0 {
				fmt.Fprintf(os.Stderr, "generate: not a prompt token id: %q\n", a)
				os.Exit(2)
			}
			prompt = append(prompt, int32(v))
		}
	}
	steps := defaultSteps
	if *maxTokens > steps {
		steps = *maxTokens
	}
	maxContext := 256
	if len(prompt)+steps > maxContext {
		maxContext = len(prompt) + steps
	}
	// Ctrl-C cancels the running step through the context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// log.Fatal exits without running deferred calls: the run below returns its error instead.
	if err := run(ctx, flag.Arg(0), prompt, maxContext, steps,
		reset.StopOptions{Strings: stops, IDs: stopIDs, MaxTokens: *maxTokens}); err != nil {
		stop()
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, prompt []int32, maxContext, steps int, stopOptions reset.StopOptions) error {
	m, err := reset.Load(dir, reset.ModelOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	s, err := m.NewSession(maxContext, 1)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.SetPolicy(reset.Greedy()); err != nil {
		return err
	}
	if len(stopOptions.Strings) > 0 || len(stopOptions.IDs) > 0 || stopOptions.MaxTokens > 0 {
		if err := s.SetStop(stopOptions); err != nil {
			return err
		}
	}
	if err := s.Prefill(ctx, prompt); err != nil {
		return err
	}
	it := s.Generate(ctx, steps)
	var last reset.Step
	stepped := false
	for it.Next() {
		last, stepped = it.Step(), true
		fmt.Printf("%6d %8.4f %q\n", last.Token, last.Entropy, last.Text)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if stepped && !last.End {
		// Stopped by the cap: text held back as the possible start of a stop string is shown now.
		held, err := s.HeldText(0)
		if err != nil {
			return err
		}
		if held != "" {
			fmt.Printf("held: %q\n", held)
		}
	}
	fmt.Println(endLine(last, stepped))
	return nil
}
