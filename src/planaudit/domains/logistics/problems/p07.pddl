;; Four cities, one airplane, six packages on crossing routes
;; (city1->city3, city1->city2, city2->city4, city3->city1,
;; city4->city3, city3->city1): the airplane tour must be ordered so
;; that each package is aboard before the airplane reaches its
;; destination, and trucks combine pick-ups with deliveries.
(define (problem logistics-p07)
  (:domain logistics)
  (:objects
    city1 city2 city3 city4 - city
    ap1 ap2 ap3 ap4 - airport
    l1a l1b l2a l3a l3b l4a - location
    t1 t2 t3 t4 - truck
    a1 - airplane
    p1 p2 p3 p4 p5 p6 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1) (in-city l1b city1)
    (in-city ap2 city2) (in-city l2a city2)
    (in-city ap3 city3) (in-city l3a city3) (in-city l3b city3)
    (in-city ap4 city4) (in-city l4a city4)
    (at t1 ap1)
    (at t2 l2a)
    (at t3 l3b)
    (at t4 ap4)
    (at a1 ap2)
    (at p1 l1a)
    (at p2 l1b)
    (at p3 l2a)
    (at p4 l3a)
    (at p5 l4a)
    (at p6 ap3)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l3b)
    (at p2 l2a)
    (at p3 l4a)
    (at p4 l1b)
    (at p5 l3a)
    (at p6 l1a)))
  (:metric minimize (total-cost)))
