use switchyard::retrieve::{Bm25Index, Hit, similarity, tokenize};

const LIBRARY: &[(&str, &str)] = &[
    ("get_weather", "Current weather conditions and temperature forecast for a city."),
    ("currencyConvert", "Convert an amount of money from one currency to another at today's exchange rate."),
    ("search_web", "Search the web and return the top result pages with snippets."),
    ("calculator", "Evaluate an arithmetic expression and return the number."),
    ("send_email", "Send an email message to a recipient with a subject and body."),
    ("translate", "Translate text from one language into another language."),
];

fn index() -> Bm25Index {
    Bm25Index::new(LIBRARY.iter().copied())
}

fn top(index: &Bm25Index, query: &str) -> Option<String> {
    index.search(query, 1).into_iter().next().map(|h| h.name)
}

#[test]
fn the_obvious_tool_ranks_first() {
    let index = index();
    assert_eq!(index.len(), LIBRARY.len());
    for (query, expected) in [
        ("What is the weather forecast in Paris tomorrow?", "get_weather"),
        ("How much is 20 USD in EUR at the current exchange rate?", "currencyConvert"),
        ("Please translate this sentence into German", "translate"),
        ("Compute the arithmetic expression 3 * (4 + 5)", "calculator"),
        ("Email my manager the report", "send_email"),
        ("searching the web for rust tutorials", "search_web"),
    ] {
        assert_eq!(top(&index, query).as_deref(), Some(expected), "{query}");
    }
}

#[test]
fn snake_and_camel_case_names_match() {
    let index = index();
    // The whole name and its parts both match, however the query spells it.
    assert_eq!(top(&index, "call send_email").as_deref(), Some("send_email"));
    assert_eq!(top(&index, "call sendEmail").as_deref(), Some("send_email"));
    assert_eq!(top(&index, "currency_convert").as_deref(), Some("currencyConvert"));
    let tokens = tokenize("getWeather");
    for t in ["get", "weather", "getweather"] {
        assert!(tokens.contains(&t.to_owned()), "{tokens:?}");
    }
    assert_eq!(tokenize("get_weather"), tokens);
}

#[test]
fn hits_are_sorted_limited_and_positive() {
    let index = index();
    let all = index.search("return the text of a web page or the number", 10);
    assert!(all.len() > 2, "{all:?}");
    assert!(all.len() < LIBRARY.len(), "docs sharing no term must be left out: {all:?}");
    for pair in all.windows(2) {
        assert!(
            pair[0].score > pair[1].score || (pair[0].score == pair[1].score && pair[0].name < pair[1].name),
            "{all:?}"
        );
    }
    assert!(all.iter().all(|h| h.score > 0.0));
    let two = index.search("return the text of a web page or the number", 2);
    assert_eq!(two, all[..2].to_vec());
    assert!(index.search("weather", 0).is_empty());
}

#[test]
fn ties_are_broken_by_name() {
    let index = Bm25Index::new([("zeta", "shared word"), ("alpha", "shared word")]);
    let hits = index.search("shared", 5);
    let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
    assert_eq!(hits[0].score, hits[1].score);
}

#[test]
fn empty_or_unmatched_queries_give_no_hits() {
    let index = index();
    assert!(index.search("", 5).is_empty());
    assert!(index.search("the of and", 5).is_empty());
    assert!(index.search("xylophone", 5).is_empty());
    let empty = Bm25Index::new(std::iter::empty());
    assert!(empty.is_empty());
    assert_eq!(empty.search("weather", 3), Vec::<Hit>::new());
}

#[test]
fn stop_words_are_dropped_and_words_stemmed() {
    assert_eq!(tokenize("The forecasts of the cities"), ["forecast", "citi"]);
    assert_eq!(tokenize("searching searches searched"), ["search"; 3]);
}

#[test]
fn similarity_is_cosine_over_tokens() {
    let q = "weather forecast for Paris";
    assert_eq!(similarity(q, q), 1.0);
    assert_eq!(similarity(q, "convert currency"), 0.0);
    assert_eq!(similarity("", ""), 0.0);
    let s = similarity(q, "weather in London");
    // Tokens {weather, forecast, paris} and {weather, london}: 1 / (√3·√2).
    assert!((s - 1.0 / 6f64.sqrt()).abs() < 1e-12, "{s}");
    assert_eq!(s, similarity("weather in London", q));
    // Same words in the same proportions count as identical.
    assert!((similarity("paris weather", "weather paris weather paris") - 1.0).abs() < 1e-12);
}
